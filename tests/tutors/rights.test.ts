import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app";
import { addMember, registerClinic, type ClinicSession } from "../helpers/clinic";
import { createKey, invoke, type QueryResult } from "../mcp/helpers";
import { startReceiver, type Receiver } from "../webhooks/receiver";

let t: TestApp;
let owner: ClinicSession;
let receiver: Receiver;

/** The tutor's personal data: after erasure none of it may be found anywhere. */
const ERASED = { name: "Zoila Erasmo Quintanilla", email: "zoila.erasmo@borrar.test", phone: "+56 9 8765 4321", national_id: "11.111.111-1", address: "Calle Olvido 123, Valdivia", notes: "Prefiere que la llamen por la tarde" };
const needles = ["Zoila", "Erasmo", "zoila.erasmo", "8765 4321", "11.111.111-1", "Calle Olvido", "llamen por la tarde"];

let tutorId: string;
let patientId: string;

beforeAll(async () => {
  receiver = startReceiver();
  t = await createTestApp();
  owner = await registerClinic(t);
  expect((await owner.as("POST", "/api/v1/webhooks", { json: { url: receiver.url, events: ["*"] } })).status).toBe(201);
  tutorId = (await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: ERASED })).body.id;
  patientId = (await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: tutorId, name: "Pelusa", species: "cat" } })).body.id;
  await owner.as("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-01-20T12:00:00Z", reason: "Control" } });
  await owner.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "email", purpose: "reminders", granted: true, evidence: `Zoila firmó en el mesón` } });
  await owner.as("PATCH", `/api/v1/tutors/${tutorId}`, { json: { notes: ERASED.notes + " (confirmado)" } });
  // A vaccination falling due: the morning's vaccination.due event names the tutor and their phone.
  await owner.as("POST", `/api/v1/patients/${patientId}/vaccinations`, { json: { vaccine: "Felocell", diseases: ["panleukopenia"], next_due_on: "2026-01-18" } });
  expect(await t.context.webhooks.dueEvents.runOnce()).toBeGreaterThan(0);
});
afterAll(async () => {
  await t.close();
  receiver.stop();
});

type Export = { format: string; version: number; tutor: Record<string, unknown>; patients: { id: string }[]; visits: unknown[]; consents: unknown[]; events: { action: string }[] };

test("the export is one versioned document with the tutor, their patients, visits, consents and the events about them", async () => {
  const exported = await owner.as<Export>("GET", `/api/v1/tutors/${tutorId}/export`);
  expect(exported.status, exported.text).toBe(200);
  expect(exported.body).toMatchObject({ format: "vet-clinic.tutor-export", version: 1 });
  expect(exported.body.tutor).toMatchObject({ id: tutorId, name: ERASED.name, email: ERASED.email });
  expect(exported.body.patients.map((p) => p.id)).toEqual([patientId]);
  expect(exported.body.visits).toHaveLength(1);
  expect(exported.body.consents).toHaveLength(1);
  expect(exported.body.events.map((e) => e.action)).toEqual(expect.arrayContaining(["tutor.created", "tutor.updated", "patient.created", "visit.created"]));
});

test("only the owner exports or erases, and only with the tutor's name typed again; a refusal changes nothing", async () => {
  const staff = await addMember(t, owner, "staff");
  expect((await staff.as("GET", `/api/v1/tutors/${tutorId}/export`)).status).toBe(403);
  expect((await staff.as("POST", `/api/v1/tutors/${tutorId}/erase`, { json: { confirm_name: ERASED.name } })).status).toBe(403);
  const wrong = await owner.as("POST", `/api/v1/tutors/${tutorId}/erase`, { json: { confirm_name: "Zoila" } });
  expect(wrong.status).toBe(422);
  expect((await owner.as<{ name: string }>("GET", `/api/v1/tutors/${tutorId}`)).body.name).toBe(ERASED.name);
});

test("after erasure no table, list, search, export, query_database answer or webhook payload carries the erased values", async () => {
  const erased = await owner.as("POST", `/api/v1/tutors/${tutorId}/erase`, { json: { confirm_name: ERASED.name.toUpperCase() } });
  expect(erased.status, erased.text).toBe(204);

  const shown = await owner.as<{ name: string; email: string | null; blocked_at: string | null }>("GET", `/api/v1/tutors/${tutorId}`);
  expect(shown.body).toMatchObject({ name: "dato bloqueado", email: null });
  expect(shown.body.blocked_at).not.toBeNull();
  const listed = await owner.as<{ data: { id: string }[] }>("GET", "/api/v1/tutors?limit=100");
  expect(listed.body.data.map((row) => row.id)).not.toContain(tutorId);
  expect((await owner.as<{ data: unknown[] }>("GET", "/api/v1/tutors?q=bloqueado")).body.data).toHaveLength(0);

  // Every row of every table, as a backup would copy it.
  const tables = await t.database.query<{ name: string }>("select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'");
  for (const { name } of tables) {
    for (const needle of needles) {
      const [found] = await t.database.query<{ n: number }>(`select count(*)::int as n from "${name}" x where x::text ilike $1`, [`%${needle}%`]);
      expect({ table: name, needle, n: found!.n }).toEqual({ table: name, needle, n: 0 });
    }
  }

  const exported = await owner.as("GET", `/api/v1/tutors/${tutorId}/export`);
  expect(exported.status).toBe(200);
  for (const needle of needles) expect(exported.text).not.toContain(needle);
  expect(exported.text).toContain("tutor.erased");

  const key = await createKey(owner, { scopes: ["read", "query"] });
  const answer = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: "select t.*, p.name as patient from tutors t left join patients p on p.tutor_id = t.id" });
  expect(answer.status, answer.text).toBe(200);
  for (const needle of needles) expect(JSON.stringify(answer.body)).not.toContain(needle);

  // Deliveries queued before the erasure carry the event log's values as they are now.
  while ((await t.context.webhooks.dispatcher.runOnce()) > 0);
  expect(receiver.received.length).toBeGreaterThan(0);
  for (const delivery of receiver.received) for (const needle of needles) expect(delivery.body).not.toContain(needle);
  expect(receiver.received.some((delivery) => JSON.parse(delivery.body).type === "tutor.erased")).toBe(true);

  // Erased once: a second request is a conflict.
  expect((await owner.as("POST", `/api/v1/tutors/${tutorId}/erase`, { json: { confirm_name: "dato bloqueado" } })).status).toBe(409);
});
