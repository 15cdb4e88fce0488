import { beforeAll, describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../../src/http/pagination";
import type { BoardVisitView } from "../../../src/modules/operations/model";
import type { ErrorBody, TestApp } from "../../helpers/app";
import { registerClinic, type ClinicSession } from "../../helpers/clinic";
import { useClinicApp } from "../../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
const ids: Record<string, string> = {};

const post = async (path: string, json: unknown) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
const names = async (path: string) => {
  const r = await owner.as<{ data: { name?: string; reason?: string; message?: string }[] }>("GET", `/api/v1${path}`);
  expect(r.status, `${path}: ${r.text}`).toBe(200);
  return r.body.data.map((row: { name?: string; reason?: string; message?: string }) => row.name ?? row.reason ?? row.message).sort();
};

// Santiago is UTC-3 in January: the clinic's 2026-01-20 runs from 03:00Z to 03:00Z the next day.
useClinicApp((made) => ({ t, owner, vet } = made), { clinic: { timezone: "America/Santiago" }, members: ["vet"] });
beforeAll(async () => {
  ids.ana = await post("/tutors", { name: "Ana Pérez" });
  ids.luis = await post("/tutors", { name: "Luis PÉREZ Soto" });
  ids.marta = await post("/tutors", { name: "Marta 100%_Díaz" });
  ids.rex = await post("/patients", { tutor_id: ids.ana, name: "Rex", species: "dog" });
  ids.michi = await post("/patients", { tutor_id: ids.ana, name: "Michi", species: "cat" });
  ids.rexito = await post("/patients", { tutor_id: ids.luis, name: "REXITO", species: "dog" });
  const visit = (patient: string, at: string, reason: string, vetId?: string) => post("/visits", { patient_id: patient, scheduled_at: at, reason, vet_id: vetId });
  ids.v1 = await visit(ids.rex, "2026-01-20T03:00:00Z", "start of the 20th");
  ids.v2 = await visit(ids.michi, "2026-01-21T02:59:59Z", "end of the 20th", vet.user.id);
  ids.v3 = await visit(ids.rexito, "2026-01-20T02:59:59Z", "end of the 19th", vet.user.id);
  ids.v4 = await visit(ids.rex, "2026-01-22T15:00:00Z", "the 22nd");
  await owner.as("PATCH", `/api/v1/visits/${ids.v4}`, { json: { status: "cancelled" } });
  await post("/alerts", { patient_id: ids.rex, kind: "vaccine_due", message: "rabies", due_date: "2026-01-20" });
  const resolved = await post("/alerts", { patient_id: ids.michi, kind: "allergy", message: "penicillin" });
  await owner.as("PATCH", `/api/v1/alerts/${resolved}`, { json: { status: "resolved" } });
  await post("/alerts", { kind: "custom", message: "call back", due_date: "2026-01-25" });
});

describe("filters", () => {
  test("q: case-insensitive part of the name; % and _ are literal", async () => {
    expect(await names("/tutors?q=pérez")).toEqual(["Ana Pérez", "Luis PÉREZ Soto"]);
    expect(await names("/tutors?q=100%25_")).toEqual(["Marta 100%_Díaz"]);
    expect(await names("/tutors?q=%25")).toEqual(["Marta 100%_Díaz"]);
    expect(await names("/patients?q=rex")).toEqual(["REXITO", "Rex"]);
  });

  test("tutor_id and species on patients", async () => {
    expect(await names(`/patients?tutor_id=${ids.ana}`)).toEqual(["Michi", "Rex"]);
    expect(await names("/patients?species=cat")).toEqual(["Michi"]);
    expect(await names("/patients?species=cat,dog")).toEqual(["Michi", "REXITO", "Rex"]);
  });

  test("visits: date_from/date_to are inclusive days in the clinic's time zone", async () => {
    expect(await names("/visits?date_from=2026-01-20&date_to=2026-01-20")).toEqual(["end of the 20th", "start of the 20th"]);
    expect(await names("/visits?date_to=2026-01-19")).toEqual(["end of the 19th"]);
    expect(await names("/visits?date_from=2026-01-21")).toEqual(["the 22nd"]);
  });

  test("visits filtered by date come in scheduled order, page after page; unfiltered ones in order of creation", async () => {
    type Page = CursorPageBody<{ reason: string }>;
    const reasons = (r: { body: Page }) => r.body.data.map((v) => v.reason);
    const first = await owner.as<Page>("GET", "/api/v1/visits?date_from=2026-01-19&limit=2");
    expect(reasons(first)).toEqual(["end of the 19th", "start of the 20th"]);
    const second = await owner.as<Page>("GET", `/api/v1/visits?date_from=2026-01-19&limit=2&cursor=${first.body.next_cursor}`);
    expect(reasons(second)).toEqual(["end of the 20th", "the 22nd"]);
    expect(second.body.has_more).toBe(false);
    const created = await owner.as<Page>("GET", "/api/v1/visits?limit=2");
    expect(reasons(created)).toEqual(["start of the 20th", "end of the 20th"]);
    // Each order has its own cursors: one from the other order is refused, never misread.
    const mixed = await owner.as<ErrorBody>("GET", `/api/v1/visits?date_from=2026-01-19&limit=2&cursor=${created.body.next_cursor}`);
    expect(mixed.body.code).toBe("INVALID_CURSOR");
  });

  test("visits: status (multi), patient_id, vet_id", async () => {
    expect(await names("/visits?status=cancelled")).toEqual(["the 22nd"]);
    expect(await names("/visits?status=scheduled,cancelled")).toHaveLength(4);
    expect(await names(`/visits?patient_id=${ids.rex}`)).toEqual(["start of the 20th", "the 22nd"]);
    expect(await names(`/visits?vet_id=${vet.user.id}&status=scheduled`)).toEqual(["end of the 19th", "end of the 20th"]);
    expect(await names(`/visits?vet_id=${vet.user.id}&offset=0`)).toHaveLength(2);
  });

  test("alerts: status, kind, patient_id, due-date range", async () => {
    expect(await names("/alerts?status=active")).toEqual(["call back", "rabies"]);
    expect(await names("/alerts?kind=allergy,custom")).toEqual(["call back", "penicillin"]);
    expect(await names(`/alerts?patient_id=${ids.rex}`)).toEqual(["rabies"]);
    expect(await names("/alerts?date_from=2026-01-21&date_to=2026-01-31")).toEqual(["call back"]);
  });

  test("unknown filter values and malformed dates are 422", async () => {
    for (const path of [
      "/visits?status=scheduled,teleported",
      "/visits?status=",
      "/visits?date_from=2026-13-01",
      "/visits?date_from=2026-02-30",
      "/visits?date_from=20-01-2026",
      "/visits?date_from=2026-01-22&date_to=2026-01-20",
      "/visits?vet_id=not-a-uuid",
      "/patients?species=dragon",
      "/alerts?kind=party",
      "/alerts?status=done",
      "/operations/visits?status=nope",
    ]) {
      const r = await owner.as<ErrorBody>("GET", `/api/v1${path}`);
      expect(r.status, `${path}: ${r.text}`).toBe(422);
      expect(r.body.code).toBe("VALIDATION_FAILED");
    }
  });
});

describe("operations board", () => {
  test("visits ordered by scheduled_at with patient and tutor summaries, filtered, paged", async () => {
    const day = await owner.as<CursorPageBody<BoardVisitView>>("GET", "/api/v1/operations/visits?date_from=2026-01-20&date_to=2026-01-20");
    expect(day.status, day.text).toBe(200);
    expect(day.body.data.map((v) => v.reason)).toEqual(["start of the 20th", "end of the 20th"]);
    expect(day.body.data[1]).toMatchObject({ patient: { id: ids.michi, name: "Michi", species: "cat" }, tutor: { id: ids.ana, name: "Ana Pérez", phone: null } });
    const all = await owner.as<CursorPageBody<BoardVisitView>>("GET", "/api/v1/operations/visits");
    expect(all.body.data.map((v) => v.reason)).toEqual(["end of the 19th", "start of the 20th", "end of the 20th", "the 22nd"]);
    const filtered = await owner.as<CursorPageBody<BoardVisitView>>("GET", `/api/v1/operations/visits?status=scheduled&vet_id=${vet.user.id}`);
    expect(filtered.body.data.map((v) => v.reason)).toEqual(["end of the 19th", "end of the 20th"]);
    const first = await owner.as<CursorPageBody<BoardVisitView>>("GET", "/api/v1/operations/visits?limit=3");
    expect(first.body.has_more).toBe(true);
    const rest = await owner.as<CursorPageBody<BoardVisitView>>("GET", `/api/v1/operations/visits?limit=3&cursor=${first.body.next_cursor}`);
    expect(rest.body.data.map((v) => v.reason)).toEqual(["the 22nd"]);
    expect(rest.body.has_more).toBe(false);
  });

  test("another clinic's board is empty", async () => {
    const other = await registerClinic(t);
    const r = await other.as<CursorPageBody<BoardVisitView>>("GET", "/api/v1/operations/visits");
    expect(r.body.data).toEqual([]);
  });
});
