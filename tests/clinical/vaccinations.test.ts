/**
 * Vaccinations and the due list: expired lots refused, a later dose for the same disease closes
 * the earlier due date, reception's reminder status, and the list's day arithmetic in the
 * clinic's time zone across both of America/Santiago's daylight-saving changes (injected clock).
 */
import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { DueItemView, VaccinationView } from "../../src/modules/vaccinations/model";
import type { ErrorBody, Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { relogin, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, vet, staff, other } = made), { clinic: { timezone: "America/Santiago" }, otherClinic: true, members: ["vet", "staff"] });

const rabies = { vaccine: "Nobivac Rabies", diseases: ["rabies"], lot: "A123", lot_expires_on: "2027-03-01" };
const give = <Body = VaccinationView>(patient: string, body: Record<string, unknown>, as = vet) => as.as<Body>("POST", `/api/v1/patients/${patient}/vaccinations`, { json: body });
const due = async (query = "", as = staff) => {
  const r = await as.as<CursorPageBody<DueItemView>>("GET", `/api/v1/vaccinations/due${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

test("a dose is recorded with who gave it; an expired lot and a due date not after the dose are refused (422, nothing written)", async () => {
  const patient = await seedPatient(t, owner);
  const r = await give(patient, { ...rabies, given_at: "2026-01-15T09:00:00-03:00", next_due_on: "2027-01-15" });
  expect(r.status, r.text).toBe(201);
  expect(r.body).toMatchObject({ given_by: vet.user.id, given_at: "2026-01-15T12:00:00Z", reminder_status: "pending", due_closed_at: null });
  const before = await t.count("vaccinations");
  const expired = await give<Refusal<ValidationDetails>>(patient, { ...rabies, lot_expires_on: "2026-01-14" });
  expect(expired.status, expired.text).toBe(422);
  expect(expired.body.details.fields[0]!.path).toBe("body.lot_expires_on");
  const dueBefore = await give(patient, { ...rabies, next_due_on: "2026-01-15" });
  expect(dueBefore.status).toBe(422);
  expect((await give(patient, { ...rabies }, staff)).status).toBe(403);
  expect((await give(patient, { ...rabies, diseases: [] })).status).toBe(422);
  expect(await t.count("vaccinations")).toBe(before);
});

test("the lot's expiry is compared with the dose's day in the clinic's time zone", async () => {
  const patient = await seedPatient(t, owner);
  // 01:30Z on the 15th is still the 14th in Santiago (UTC−3): a lot expiring on the 14th is good that evening.
  const r = await give(patient, { ...rabies, lot_expires_on: "2026-01-14", given_at: "2026-01-15T01:30:00Z" });
  expect(r.status, r.text).toBe(201);
});

test("a later dose for the same disease closes the earlier due date; a dose recorded late starts closed", async () => {
  const patient = await seedPatient(t, owner);
  const first = await give(patient, { vaccine: "Vanguard Plus 5", diseases: ["distemper", "parvovirus", "hepatitis", "parainfluenza"], given_at: "2025-01-10T15:00:00Z", next_due_on: "2026-01-10" });
  const unrelated = await give(patient, { ...rabies, given_at: "2025-01-10T15:00:00Z", next_due_on: "2026-01-10" });
  const booster = await give(patient, { vaccine: "Nobivac Puppy DP", diseases: ["parvovirus", "distemper"], given_at: "2026-01-12T15:00:00Z", next_due_on: "2027-01-12" });
  const closed = await owner.as<VaccinationView>("GET", `/api/v1/vaccinations/${first.body.id}`);
  expect(closed.body).toMatchObject({ due_closed_by: booster.body.id, due_closed_at: "2026-01-15T12:00:00Z" });
  expect((await owner.as<VaccinationView>("GET", `/api/v1/vaccinations/${unrelated.body.id}`)).body.due_closed_at).toBeNull();
  const late = await give(patient, { vaccine: "Nobivac Puppy DP", diseases: ["parvovirus"], given_at: "2025-06-01T15:00:00Z", next_due_on: "2026-06-01" });
  expect(late.body.due_closed_by).toBe(booster.body.id);
  const listed = (await due("?from=2026-01-01&to=2027-12-31")).data.filter((d) => d.patient.id === patient);
  expect(listed.map((d) => d.id)).toEqual([unrelated.body.id, booster.body.id]);
  expect((await staff.as<ErrorBody>("PATCH", `/api/v1/vaccinations/${first.body.id}/reminder`, { json: { reminder_status: "contacted" } })).status).toBe(409);
});

test("reception marks reminders; the list carries patient, species, tutor and phone, and filters by reminder status", async () => {
  const patient = await seedPatient(t, owner);
  const dose = await give(patient, { ...rabies, given_at: "2025-02-01T15:00:00Z", next_due_on: "2026-02-01" });
  const marked = await staff.as<VaccinationView>("PATCH", `/api/v1/vaccinations/${dose.body.id}/reminder`, { json: { reminder_status: "booked" } });
  expect(marked.status, marked.text).toBe(200);
  expect(marked.body).toMatchObject({ reminder_status: "booked", reminder_updated_at: "2026-01-15T12:00:00Z" });
  const item = (await due("?to=2026-02-28&reminder_status=booked")).data.find((d) => d.id === dose.body.id)!;
  expect(item).toMatchObject({ due_on: "2026-02-01", overdue: false, vaccine: "Nobivac Rabies", reminder_status: "booked", patient: { id: patient, name: "Seeded Pet", species: "dog" }, tutor: { name: "Seeded Tutor", phone: "+56911112222" } });
  expect((await due("?to=2026-02-28&reminder_status=pending")).data.map((d) => d.id)).not.toContain(dose.body.id);
  expect((await staff.as("PATCH", `/api/v1/vaccinations/${dose.body.id}/reminder`, { json: { reminder_status: "forgotten" } })).status).toBe(422);
  expect((await other.as("PATCH", `/api/v1/vaccinations/${dose.body.id}/reminder`, { json: { reminder_status: "declined" } })).status).toBe(404);
  expect((await due("", other)).data).toEqual([]);
});

test("the due list pages with its cursor; to before from is 422; a deleted patient leaves the list but keeps its record", async () => {
  const patient = await seedPatient(t, owner);
  for (const day of ["2026-03-01", "2026-03-02", "2026-03-03"]) await give(patient, { ...rabies, diseases: [`disease-${day}`], given_at: "2025-03-01T15:00:00Z", next_due_on: day });
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: CursorPageBody<DueItemView> = await due(`?from=2026-03-01&to=2026-03-03&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
    seen.push(...page.data.filter((d) => d.due_on >= "2026-03-01").map((d) => d.due_on));
    cursor = page.next_cursor;
  } while (cursor);
  expect(seen).toEqual(["2026-03-01", "2026-03-02", "2026-03-03"]);
  expect((await staff.as("GET", "/api/v1/vaccinations/due?from=2026-03-02&to=2026-03-01")).status).toBe(422);
  expect((await staff.as("GET", "/api/v1/vaccinations/due?from=2026-02-30")).status).toBe(422);
  expect((await owner.as("DELETE", `/api/v1/patients/${patient}`)).status).toBe(204);
  expect((await due("?from=2026-03-01&to=2026-03-03")).data.filter((d) => d.patient.id === patient)).toEqual([]);
  expect(await t.database.query("select id from vaccinations where patient_id = $1", [patient])).toHaveLength(3);
});

/** A patient with due dates on each of these days (doses against different diseases given the year before). */
async function dueOn(days: string[]) {
  const patient = await seedPatient(t, owner);
  const ids: Record<string, string> = {};
  for (const day of days) ids[day] = (await give(patient, { ...rabies, diseases: [`disease-${day}`], lot_expires_on: null, given_at: "2025-03-01T15:00:00Z", next_due_on: day })).body.id;
  return { patient, ids };
}
/** The clock at `instant`, with fresh sessions (each step moves it past their tokens' lifetime); several logins take a while on a busy machine. */
async function at(instant: string) {
  t.clock.set(instant);
  staff = await relogin(t, staff);
  vet = await relogin(t, vet);
  owner = await relogin(t, owner);
}
const overdueOf = async (patient: string, query = "") => Object.fromEntries((await due(`${query || "?"}&limit=200`)).data.filter((d) => d.patient.id === patient).map((d) => [d.due_on, d.overdue]));

test("across the April change (UTC−3 → UTC−4 at 03:00Z): today turns at local midnight, not at UTC's", async () => {
  await at("2026-03-20T12:00:00Z");
  const { patient } = await dueOn(["2026-04-04", "2026-04-05"]);
  // 03:30Z on the 5th is 23:30 on the 4th in Santiago (now UTC−4): the 4th is due today, not overdue.
  await at("2026-04-05T03:30:00Z");
  expect(await overdueOf(patient)).toEqual({ "2026-04-04": false, "2026-04-05": false });
  await at("2026-04-05T04:00:00Z");
  expect(await overdueOf(patient)).toEqual({ "2026-04-04": true, "2026-04-05": false });
}, 30_000);

test("across the September change (UTC−4 → UTC−3 at 04:00Z): from defaults to the clinic's today; overdue ones come with any window", async () => {
  await at("2026-08-20T12:00:00Z");
  const { patient } = await dueOn(["2026-09-05", "2026-09-06", "2026-09-07", "2026-10-07"]);
  await at("2026-09-06T03:59:00Z");
  expect(await overdueOf(patient)).toEqual({ "2026-09-05": false, "2026-09-06": false, "2026-09-07": false });
  await at("2026-09-06T04:00:00Z");
  // Default window: today (the 6th) through 30 days later; the 5th is overdue.
  expect(await overdueOf(patient)).toEqual({ "2026-09-05": true, "2026-09-06": false, "2026-09-07": false });
  // A window later on still brings every overdue one; the 6th (due today, outside it) is not in it.
  expect(await overdueOf(patient, "?from=2026-09-07&to=2026-10-07")).toEqual({ "2026-09-05": true, "2026-09-07": false, "2026-10-07": false });
}, 30_000);
