import { describe, expect, test } from "bun:test";
import type { OffsetPageBody, Refusal, TestApp, ValidationDetails } from "../../helpers/app";
import type { ClinicSession } from "../../helpers/clinic";
import { useClinicApp } from "../../helpers/fixture";
import type { CursorPageBody } from "../../../src/http/pagination";
import type { AlertView } from "../../../src/modules/alerts/model";
import type { PatientView } from "../../../src/modules/patients/model";
import type { TutorView } from "../../../src/modules/tutors/model";
import type { VisitView } from "../../../src/modules/visits/model";

let t: TestApp;
let a: ClinicSession;
let b: ClinicSession;
useClinicApp((made) => ({ t, owner: a, other: b } = made), { otherClinic: true });

const count = (table: string) => t.count(table);
const create = async <View = unknown>(who: ClinicSession, path: string, json: unknown) => {
  const r = await who.as<View>("POST", `/api/v1${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body;
};

describe("tutors", () => {
  test("create, read, patch partially, soft delete", async () => {
    const tutor = await create<TutorView>(a, "/tutors", { name: " Camila Rojas ", email: "camila@correo.cl", phone: "+56 9 1234 5678", national_id: "12.345.678-5" });
    expect(tutor).toMatchObject({ name: "Camila Rojas", email: "camila@correo.cl", address: null, clinic_id: a.clinic.id });
    expect((await a.as("GET", `/api/v1/tutors/${tutor.id}`)).body).toEqual(tutor);
    t.clock.advance(1000);
    const patched = await a.as<TutorView>("PATCH", `/api/v1/tutors/${tutor.id}`, { json: { address: "Av. Grecia 123", email: null } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: "Camila Rojas", address: "Av. Grecia 123", email: null, phone: "+56 9 1234 5678" });
    expect(patched.body.updated_at).not.toBe(tutor.updated_at);
    expect((await a.as("DELETE", `/api/v1/tutors/${tutor.id}`)).status).toBe(204);
    expect((await a.as("GET", `/api/v1/tutors/${tutor.id}`)).status).toBe(404);
    expect((await a.as("DELETE", `/api/v1/tutors/${tutor.id}`)).status).toBe(404);
    const list = await a.as<CursorPageBody<TutorView>>("GET", "/api/v1/tutors?limit=200");
    expect(list.body.data.map((x) => x.id)).not.toContain(tutor.id);
    const offset = await a.as<OffsetPageBody<TutorView>>("GET", "/api/v1/tutors?offset=0&limit=200");
    expect(offset.body.data.map((x: { id: string }) => x.id)).not.toContain(tutor.id);
  });

  test("invalid fields are 422 with each field named, and nothing is written", async () => {
    const before = await count("tutors");
    const r = await a.as<Refusal<ValidationDetails>>("POST", "/api/v1/tutors", { json: { name: "", email: "not-an-email", phone: "call me", notes: "x".repeat(2001) } });
    expect(r.status, r.text).toBe(422);
    expect(r.body.details.fields.map((f: { path: string }) => f.path).sort()).toEqual(expect.arrayContaining(["body.email", "body.name", "body.notes", "body.phone"]));
    const empty = await a.as("PATCH", `/api/v1/tutors/${(await create<TutorView>(a, "/tutors", { name: "X" })).id}`, { json: {} });
    expect(empty.status, empty.text).toBe(422);
    expect(await count("tutors")).toBe(before + 1);
  });
});

describe("patients", () => {
  test("create with a tutor of the clinic, patch, delete", async () => {
    const tutor = await create<TutorView>(a, "/tutors", { name: "Matías Soto" });
    const patient = await create<PatientView>(a, "/patients", { tutor_id: tutor.id, name: "Firulais", species: "dog", breed: "Quiltro", sex: "male", birth_date: "2020-05-01", weight_grams: 12_500, microchip: "941000024567890" });
    expect(patient).toMatchObject({ tutor_id: tutor.id, species: "dog", weight_grams: 12_500, birth_date: "2020-05-01" });
    const patched = await a.as("PATCH", `/api/v1/patients/${patient.id}`, { json: { weight_grams: 13_000, breed: null } });
    expect(patched.body, patched.text).toMatchObject({ weight_grams: 13_000, breed: null, name: "Firulais" });
    expect((await a.as("DELETE", `/api/v1/patients/${patient.id}`)).status).toBe(204);
    expect((await a.as("GET", `/api/v1/patients/${patient.id}`)).status).toBe(404);
  });

  test("field validation: species, sex, weight as string or float, future or impossible birth date", async () => {
    const tutor = await create<TutorView>(a, "/tutors", { name: "T" });
    const before = await count("patients");
    const cases: [Record<string, unknown>, string][] = [
      [{ species: "dragon" }, "body.species"],
      [{ sex: "x" }, "body.sex"],
      [{ weight_grams: "12000" }, "body.weight_grams"],
      [{ weight_grams: 1.5 }, "body.weight_grams"],
      [{ birth_date: "2030-01-01" }, "body.birth_date"],
      [{ birth_date: "2021-02-30" }, "body.birth_date"],
      [{ microchip: "12" }, "body.microchip"],
      [{ tutor_id: "nope" }, "body.tutor_id"],
    ];
    for (const [extra, field] of cases) {
      const r = await a.as<Refusal<ValidationDetails>>("POST", "/api/v1/patients", { json: { tutor_id: tutor.id, name: "P", species: "cat", ...extra } });
      expect(r.status, `${JSON.stringify(extra)}: ${r.text}`).toBe(422);
      expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(field);
    }
    expect(await count("patients")).toBe(before);
  });
});

describe("visits and alerts", () => {
  test("visit CRUD; status is scheduled at creation and the vet must belong to the clinic", async () => {
    const tutor = await create<TutorView>(a, "/tutors", { name: "T" });
    const patient = await create<PatientView>(a, "/patients", { tutor_id: tutor.id, name: "Michi", species: "cat" });
    const visit = await create<VisitView>(a, "/visits", { patient_id: patient.id, vet_id: a.user.id, scheduled_at: "2026-01-16T13:00:00Z", reason: "Vacuna" });
    expect(visit).toMatchObject({ status: "scheduled", started_at: null, completed_at: null, vet_id: a.user.id, scheduled_at: "2026-01-16T13:00:00Z" });
    const patched = await a.as("PATCH", `/api/v1/visits/${visit.id}`, { json: { scheduled_at: "2026-01-16T15:00:00Z", notes: "Llega tarde" } });
    expect(patched.body, patched.text).toMatchObject({ scheduled_at: "2026-01-16T15:00:00Z", notes: "Llega tarde", reason: "Vacuna" });
    const foreignVet = await a.as("PATCH", `/api/v1/visits/${visit.id}`, { json: { vet_id: b.user.id } });
    expect(foreignVet.status, foreignVet.text).toBe(422);
    expect((await a.as("DELETE", `/api/v1/visits/${visit.id}`)).status).toBe(204);
    expect((await a.as("GET", `/api/v1/visits/${visit.id}`)).status).toBe(404);
  });

  test("alert CRUD; resolving stamps resolved_at, re-activating clears it", async () => {
    const alert = await create<AlertView>(a, "/alerts", { kind: "follow_up", message: "Control en 15 días", due_date: "2026-02-01" });
    expect(alert).toMatchObject({ status: "active", resolved_at: null, patient_id: null });
    t.clock.advance(60_000);
    const resolved = await a.as<AlertView>("PATCH", `/api/v1/alerts/${alert.id}`, { json: { status: "resolved" } });
    expect(resolved.body.resolved_at, resolved.text).toBe(t.clock.now().toISOString().replace(".000Z", "Z"));
    const active = await a.as<AlertView>("PATCH", `/api/v1/alerts/${alert.id}`, { json: { status: "active" } });
    expect(active.body.resolved_at).toBeNull();
    const bad = await a.as<Refusal<ValidationDetails>>("POST", "/api/v1/alerts", { json: { kind: "party", message: "" } });
    expect(bad.status).toBe(422);
    expect(bad.body.details.fields.map((f: { path: string }) => f.path)).toEqual(expect.arrayContaining(["body.kind", "body.message"]));
    expect((await a.as("DELETE", `/api/v1/alerts/${alert.id}`)).status).toBe(204);
  });
});

describe("clinic isolation, from the attacker's side", () => {
  test.each([
    ["tutors", async (who: ClinicSession) => create<TutorView>(who, "/tutors", { name: "Secret Tutor" })],
    ["patients", async (who: ClinicSession) => create<PatientView>(who, "/patients", { tutor_id: (await create<TutorView>(who, "/tutors", { name: "T" })).id, name: "Secret Pet", species: "dog" })],
    ["visits", async (who: ClinicSession) => create<VisitView>(who, "/visits", { patient_id: (await create<PatientView>(who, "/patients", { tutor_id: (await create<TutorView>(who, "/tutors", { name: "T" })).id, name: "P", species: "dog" })).id, scheduled_at: "2026-01-15T18:00:00Z" })],
    ["alerts", async (who: ClinicSession) => create<AlertView>(who, "/alerts", { kind: "custom", message: "Secret" })],
  ] as const)("%s: another clinic cannot read, list, patch or delete", async (resource, make) => {
    const record = await make(a);
    for (const [method, json] of [["GET", undefined], ["PATCH", { notes: "pwned", name: "pwned", message: "pwned" }], ["DELETE", undefined]] as const) {
      const r = await b.as(method, `/api/v1/${resource}/${record.id}`, { json: method === "PATCH" ? pick(resource, json!) : undefined });
      expect(r.status, `${method}: ${r.text}`).toBe(404);
    }
    for (const query of ["?limit=200", "?offset=0&limit=200"]) {
      const list = await b.as("GET", `/api/v1/${resource}${query}`);
      expect(list.text).not.toContain(record.id);
    }
    expect((await a.as("GET", `/api/v1/${resource}/${record.id}`)).body).toEqual(record);
  });

  test("a reference to another clinic's record is a 422, never a leak, and writes nothing", async () => {
    const tutorA = await create<TutorView>(a, "/tutors", { name: "A's tutor" });
    const patientA = await create<PatientView>(a, "/patients", { tutor_id: tutorA.id, name: "A's pet", species: "dog" });
    const [patients, visits, alerts] = [await count("patients"), await count("visits"), await count("alerts")];
    const cases: [string, unknown, string][] = [
      ["/patients", { tutor_id: tutorA.id, name: "X", species: "cat" }, "body.tutor_id"],
      ["/visits", { patient_id: patientA.id, scheduled_at: "2026-01-15T18:00:00Z" }, "body.patient_id"],
      ["/alerts", { patient_id: patientA.id, kind: "custom", message: "x" }, "body.patient_id"],
    ];
    for (const [path, json, field] of cases) {
      const r = await b.as<Refusal<ValidationDetails>>("POST", `/api/v1${path}`, { json });
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields[0]!.path).toBe(field);
      expect(r.text).not.toContain("A's");
    }
    expect([await count("patients"), await count("visits"), await count("alerts")]).toEqual([patients, visits, alerts]);
  });
});

function pick(resource: string, json: Record<string, string>) {
  if (resource === "tutors" || resource === "patients") return { name: json.name };
  if (resource === "alerts") return { message: json.message };
  return { notes: json.notes };
}
