/** Vitals: plausible ranges (422 naming the field), at least one measurement, and the one weight rule. */
import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { PatientView } from "../../src/modules/patients/model";
import type { VitalsView } from "../../src/modules/vitals/model";
import type { Refusal, TestApp, ValidationDetails } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
useClinicApp((made) => ({ t, owner, vet, staff } = made), { members: ["vet", "staff"] });

const patient = (id: string) => owner.as<PatientView>("GET", `/api/v1/patients/${id}`);

test.each([
  [{ weight_grams: 0 }, "body.weight_grams"],
  [{ weight_grams: 2_000_001 }, "body.weight_grams"],
  [{ temperature_dc: 39.5 }, "body.temperature_dc"],
  [{ temperature_dc: 600 }, "body.temperature_dc"],
  [{ temperature_dc: 200 }, "body.temperature_dc"],
  [{ heart_rate_bpm: 2_000 }, "body.heart_rate_bpm"],
  [{ respiratory_rate_bpm: 0 }, "body.respiratory_rate_bpm"],
  [{ body_condition_score: 10 }, "body.body_condition_score"],
  [{ body_condition_score: "5" }, "body.body_condition_score"],
  [{}, "body"],
  [{ measured_at: "2026-01-15T10:00:00Z" }, "body"],
  [{ weight_grams: 5000, measured_at: "2027-01-01T00:00:00Z" }, "body.measured_at"],
])("%j is 422 naming %s and writes nothing", async (body, path) => {
  const id = await seedPatient(t, owner);
  const before = await t.count("vitals");
  const r = await vet.as<Refusal<ValidationDetails>>("POST", `/api/v1/patients/${id}/vitals`, { json: body });
  expect(r.status, r.text).toBe(422);
  expect(r.body.details.fields.map((f) => f.path)).toContain(path);
  expect(await t.count("vitals")).toBe(before);
});

test("a full set is stored; staff read vitals but do not record them", async () => {
  const id = await seedPatient(t, owner);
  const r = await vet.as<VitalsView>("POST", `/api/v1/patients/${id}/vitals`, { json: { weight_grams: 12_400, temperature_dc: 385, heart_rate_bpm: 96, respiratory_rate_bpm: 24, body_condition_score: 5 } });
  expect(r.status, r.text).toBe(201);
  expect(r.body).toMatchObject({ patient_id: id, recorded_by: vet.user.id, measured_at: "2026-01-15T12:00:00Z", temperature_dc: 385 });
  expect((await staff.as("POST", `/api/v1/patients/${id}/vitals`, { json: { weight_grams: 1 } })).status).toBe(403);
  const list = await staff.as<CursorPageBody<VitalsView>>("GET", `/api/v1/patients/${id}/vitals`);
  expect(list.body.data).toEqual([r.body]);
});

test("the patient's weight is its latest measured weight: a later weighing moves it, a backdated one does not", async () => {
  const id = await seedPatient(t, owner);
  const weigh = (grams: number, at: string) => vet.as("POST", `/api/v1/patients/${id}/vitals`, { json: { weight_grams: grams, measured_at: at } });
  expect((await weigh(10_000, "2026-01-10T12:00:00Z")).status).toBe(201);
  expect((await patient(id)).body.weight_grams).toBe(10_000);
  await weigh(11_000, "2026-01-14T12:00:00Z");
  expect((await patient(id)).body.weight_grams).toBe(11_000);
  await weigh(9_000, "2025-12-01T12:00:00Z");
  expect((await patient(id)).body.weight_grams).toBe(11_000);
  // A measurement without a weight leaves it alone.
  await vet.as("POST", `/api/v1/patients/${id}/vitals`, { json: { temperature_dc: 390 } });
  expect((await patient(id)).body.weight_grams).toBe(11_000);
  const chart = await owner.as<CursorPageBody<VitalsView>>("GET", `/api/v1/patients/${id}/vitals?order=desc`);
  expect(chart.body.data.map((v) => v.weight_grams)).toEqual([null, 11_000, 10_000, 9_000]);
});

test("a weight sent on the patient is a weighing now: it joins the vitals; null cannot clear it", async () => {
  const tutor = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Pesada" } });
  const created = await owner.as<PatientView>("POST", "/api/v1/patients", { json: { tutor_id: tutor.body.id, name: "Toby", species: "dog", weight_grams: 8_000 } });
  expect(created.body.weight_grams).toBe(8_000);
  t.clock.advance(60_000);
  const patched = await staff.as<PatientView>("PATCH", `/api/v1/patients/${created.body.id}`, { json: { weight_grams: 8_300 } });
  expect(patched.body.weight_grams).toBe(8_300);
  const history = await owner.as<CursorPageBody<VitalsView>>("GET", `/api/v1/patients/${created.body.id}/vitals`);
  expect(history.body.data.map((v) => [v.weight_grams, v.measured_at])).toEqual([[8_000, "2026-01-15T12:00:00Z"], [8_300, "2026-01-15T12:01:00Z"]]);
  const cleared = await owner.as<Refusal<ValidationDetails>>("PATCH", `/api/v1/patients/${created.body.id}`, { json: { weight_grams: null } });
  expect(cleared.status, cleared.text).toBe(422);
  expect(cleared.body.details.fields[0]!.path).toBe("body.weight_grams");
});

test("deleting a patient keeps its vitals in the database", async () => {
  const id = await seedPatient(t, owner);
  await vet.as("POST", `/api/v1/patients/${id}/vitals`, { json: { weight_grams: 4_000 } });
  expect((await owner.as("DELETE", `/api/v1/patients/${id}`)).status).toBe(204);
  expect((await owner.as("GET", `/api/v1/patients/${id}/vitals`)).status).toBe(404);
  expect(await t.database.query("select id from vitals where patient_id = $1 and deleted_at is null", [id])).toHaveLength(1);
});
