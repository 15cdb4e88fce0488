import { expect, test } from "bun:test";
import type { VisitView } from "../../src/modules/visits/model";
import type { Refusal, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
useClinicApp((made) => ({ t, owner, vet, staff } = made), { members: ["vet", "staff"] });

type SlotTaken = Refusal<{ conflicting_visit_id: string; alternatives: { start: string; end: string; vet_id: string; room_id: string | null }[] }>;

const book = async (json: Record<string, unknown>) => owner.as<VisitView & SlotTaken>("POST", "/api/v1/visits", { json: { patient_id: await seedPatient(t, owner), ...json } });
const created = async (what: string, json: Record<string, unknown>) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1/${what}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};

test("a visit lasts 30 minutes by default, its type's duration with a type, or until its own end", async () => {
  const plain = await book({ scheduled_at: "2026-02-02T13:00:00Z" });
  expect(plain.status, plain.text).toBe(201);
  expect(plain.body).toMatchObject({ ends_at: "2026-02-02T13:30:00Z", appointment_type_id: null, room_id: null, buffer_before_minutes: 0, buffer_after_minutes: 0 });
  const type = await created("appointment-types", { name: "Cirugía menor", duration_minutes: 90, buffer_after_minutes: 15 });
  const typed = await book({ scheduled_at: "2026-02-02T13:00:00Z", appointment_type_id: type });
  expect(typed.body).toMatchObject({ ends_at: "2026-02-02T14:30:00Z", buffer_after_minutes: 15 });
  const explicit = await book({ scheduled_at: "2026-02-02T13:00:00Z", ends_at: "2026-02-02T13:10:00Z" });
  expect(explicit.body.ends_at).toBe("2026-02-02T13:10:00Z");
  const inverted = await book({ scheduled_at: "2026-02-02T13:00:00Z", ends_at: "2026-02-02T12:10:00Z" });
  expect(inverted.status, inverted.text).toBe(422);
});

test("the same vet twice at overlapping times is 409 SLOT_TAKEN naming the visit and free alternatives", async () => {
  const first = await book({ scheduled_at: "2026-02-03T14:00:00Z", vet_id: vet.user.id });
  expect(first.status, first.text).toBe(201);
  const before = await t.count("visits");
  const clash = await book({ scheduled_at: "2026-02-03T14:15:00Z", vet_id: vet.user.id });
  expect(clash.status, clash.text).toBe(409);
  expect(clash.body.code).toBe("SLOT_TAKEN");
  expect(clash.body.details.conflicting_visit_id).toBe(first.body.id);
  const alternatives = clash.body.details.alternatives;
  expect(alternatives.length).toBeGreaterThan(0);
  expect(alternatives.length).toBeLessThanOrEqual(3);
  for (const slot of alternatives) {
    expect(slot.vet_id).toBe(vet.user.id);
    expect(Date.parse(slot.end) - Date.parse(slot.start)).toBe(30 * 60_000);
    const overlaps = Date.parse(slot.start) < Date.parse("2026-02-03T14:30:00Z") && Date.parse("2026-02-03T14:00:00Z") < Date.parse(slot.end);
    expect(overlaps).toBe(false);
    const retry = await book({ scheduled_at: slot.start, vet_id: vet.user.id });
    expect(retry.status, retry.text).toBe(201);
  }
  expect(await t.count("visits")).toBe(before + alternatives.length);
  // Back to back is not an overlap; another vet at the same time is free.
  expect((await book({ scheduled_at: "2026-02-03T13:30:00Z", vet_id: vet.user.id })).status).toBe(201);
  expect((await book({ scheduled_at: "2026-02-03T14:00:00Z", vet_id: owner.user.id })).status).toBe(201);
});

test("buffers hold the vet before and after; a cancelled or no-show visit frees its time", async () => {
  const type = await created("appointment-types", { name: "Control", duration_minutes: 30, buffer_before_minutes: 5, buffer_after_minutes: 10 });
  const first = await book({ scheduled_at: "2026-02-04T14:00:00Z", vet_id: vet.user.id, appointment_type_id: type });
  expect(first.status, first.text).toBe(201);
  expect((await book({ scheduled_at: "2026-02-04T14:35:00Z", vet_id: vet.user.id })).status).toBe(409);
  expect((await book({ scheduled_at: "2026-02-04T13:30:00Z", ends_at: "2026-02-04T13:56:00Z", vet_id: vet.user.id })).status).toBe(409);
  expect((await book({ scheduled_at: "2026-02-04T14:40:00Z", vet_id: vet.user.id })).status).toBe(201);
  expect((await owner.as("PATCH", `/api/v1/visits/${first.body.id}`, { json: { status: "cancelled" } })).status).toBe(200);
  expect((await book({ scheduled_at: "2026-02-04T14:00:00Z", vet_id: vet.user.id })).status).toBe(201);
});

test("a room is held like a vet; a type that needs a room gets a free one", async () => {
  const room = await created("rooms", { name: "Box 1" });
  const room2 = await created("rooms", { name: "Box 2" });
  const surgery = await created("appointment-types", { name: "Ecografía", duration_minutes: 30, room_required: true });
  const a = await book({ scheduled_at: "2026-02-05T14:00:00Z", room_id: room });
  expect(a.status, a.text).toBe(201);
  const clash = await book({ scheduled_at: "2026-02-05T14:10:00Z", room_id: room });
  expect(clash.status, clash.text).toBe(409);
  expect(clash.body.details.conflicting_visit_id).toBe(a.body.id);
  const auto = await book({ scheduled_at: "2026-02-05T14:00:00Z", appointment_type_id: surgery });
  expect(auto.status, auto.text).toBe(201);
  expect(auto.body.room_id).toBe(room2);
});

test("moving a visit onto a taken time is 409 and leaves it where it was; moving keeps its length", async () => {
  const a = await book({ scheduled_at: "2026-02-06T14:00:00Z", vet_id: vet.user.id, ends_at: "2026-02-06T14:45:00Z" });
  const b = await book({ scheduled_at: "2026-02-06T16:00:00Z", vet_id: vet.user.id });
  const move = await owner.as<SlotTaken>("PATCH", `/api/v1/visits/${b.body.id}`, { json: { scheduled_at: "2026-02-06T14:30:00Z" } });
  expect(move.status, move.text).toBe(409);
  expect(move.body.details.conflicting_visit_id).toBe(a.body.id);
  expect((await owner.as<VisitView>("GET", `/api/v1/visits/${b.body.id}`)).body.scheduled_at).toBe("2026-02-06T16:00:00Z");
  const moved = await owner.as<VisitView>("PATCH", `/api/v1/visits/${a.body.id}`, { json: { scheduled_at: "2026-02-06T10:00:00Z" } });
  expect(moved.body, moved.text).toMatchObject({ scheduled_at: "2026-02-06T10:00:00Z", ends_at: "2026-02-06T10:45:00Z", revision: 1 });
});

test("the database itself refuses an overlapping live visit (exclusion constraint)", async () => {
  const a = await book({ scheduled_at: "2026-02-07T14:00:00Z", vet_id: vet.user.id });
  const insert = (id: string, at: string, status = "scheduled") =>
    t.database.query(
      "insert into visits (id, clinic_id, patient_id, vet_id, status, scheduled_at, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, now(), now())",
      [id, owner.clinic.id, a.body.patient_id, vet.user.id, status, at],
    );
  const error = await insert("01900000-0000-7000-8000-000000000001", "2026-02-07T14:20:00Z").then(() => null, (e: unknown) => e as { code?: string });
  expect(error?.code).toBe("23P01");
  // A cancelled row holds nothing, and the trigger gives a row without an end 30 minutes.
  await insert("01900000-0000-7000-8000-000000000002", "2026-02-07T14:20:00Z", "cancelled");
  const [row] = await t.database.query<{ ends_at: Date }>("select ends_at from visits where id = $1", ["01900000-0000-7000-8000-000000000002"]);
  expect(new Date(row!.ends_at).toISOString()).toBe("2026-02-07T14:50:00.000Z");
});

test("appointment types and rooms are the owner's to change; everyone reads them", async () => {
  const refused = await staff.as("POST", "/api/v1/appointment-types", { json: { name: "X", duration_minutes: 30 } });
  expect(refused.status, refused.text).toBe(403);
  expect((await vet.as("POST", "/api/v1/rooms", { json: { name: "Box 9" } })).status).toBe(403);
  expect((await staff.as("GET", "/api/v1/appointment-types")).status).toBe(200);
  const unknownVet = await owner.as("POST", "/api/v1/appointment-types", { json: { name: "X", duration_minutes: 30, vet_ids: ["01900000-0000-7000-8000-0000000000ff"] } });
  expect(unknownVet.status, unknownVet.text).toBe(422);
});
