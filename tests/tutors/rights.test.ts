import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app";
import { addMember, registerClinic, type ClinicSession } from "../helpers/clinic";
import { createKey, invoke, type QueryResult } from "../mcp/helpers";
import { startReceiver, type Receiver } from "../webhooks/receiver";
import { emitted } from "../billing/helpers";
import { makeIssuer } from "../billing/sii-fixtures";

let t: TestApp;
let owner: ClinicSession;
let receiver: Receiver;

/** The tutor's personal data: after erasure none of it may be found anywhere. */
const ERASED = { name: "Zoila Erasmo Quintanilla", email: "zoila.erasmo@borrar.test", phone: "+56 9 8765 4321", national_id: "11.111.111-1", address: "Calle Olvido 123, Valdivia", notes: "Prefiere que la llamen por la tarde" };
const needles = ["Zoila", "Erasmo", "zoila.erasmo", "8765 4321", "11.111.111-1", "Calle Olvido", "llamen por la tarde"];

let tutorId: string;
let patientId: string;
let documentId: string;
/** A factura the tutor asked for in their own name: the Código Tributario keeps its receiver data. */
const RECEIVER = { receiver_rut: ERASED.national_id, receiver_name: ERASED.name, receiver_giro: "Particular", receiver_address: ERASED.address, receiver_commune: "Valdivia" };

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
  await makeIssuer(owner, [33]);
  const invoice = await emitted(owner, [{ quantity: 1, unit_price: 25_000 }], tutorId);
  const factura = await owner.as<{ id: string }>("POST", "/api/v1/billing/sii/documents", { json: { doc_type: 33, invoice_id: invoice.id, ...RECEIVER } });
  expect(factura.status, factura.text).toBe(201);
  documentId = factura.body.id;
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

  const key = await createKey(owner, { scopes: ["read", "query"] });
  const answer = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: "select t.*, p.name as patient from tutors t left join patients p on p.tutor_id = t.id" });
  expect(answer.status, answer.text).toBe(200);
  for (const needle of needles) expect(JSON.stringify(answer.body)).not.toContain(needle);
  // The tax documents' view shows the kept receiver blocked, and a search by it finds nothing.
  const documents = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: "select * from tax_documents" });
  expect(documents.status, documents.text).toBe(200);
  for (const needle of needles) expect(JSON.stringify(documents.body), needle).not.toContain(needle);
  expect(JSON.stringify(documents.body)).toContain("dato bloqueado");
  const SEARCH_BY_ERASED_NAME = "select count(*) as n from tax_documents d join invoices i on i.id = d.invoice_id where d.receiver_name ilike '%zoila%' or d.receiver_rut like '11.111%'";
  const searched = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: SEARCH_BY_ERASED_NAME });
  expect(JSON.stringify(searched.body), searched.text).toContain('"n":0');

  // The factura keeps its receiver for the legal period, blocked: stored, never shown.
  const [kept] = await t.database.query<{ receiver_name: string; receiver_blocked_at: unknown }>("select receiver_name, receiver_blocked_at from tax_documents where id = $1", [documentId]);
  expect(kept!.receiver_name).toBe(ERASED.name);
  expect(kept!.receiver_blocked_at).not.toBeNull();
  const document = await owner.as<Record<string, unknown>>("GET", `/api/v1/billing/sii/documents/${documentId}`);
  expect(document.body).toMatchObject({ receiver_rut: "dato bloqueado", receiver_name: "dato bloqueado", receiver_giro: "dato bloqueado", receiver_address: "dato bloqueado", receiver_commune: "dato bloqueado" });
  for (const path of ["/api/v1/billing/sii/documents?limit=200", "/api/v1/billing/sii/documents?doc_type=33", `/api/v1/billing/sii/documents?updated_since=2000-01-01T00:00:00Z`]) {
    const listed = await owner.as<{ data: { id: string }[] }>("GET", path);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data.map((row) => row.id), path).toContain(documentId);
    for (const needle of needles) expect(listed.text, path).not.toContain(needle);
  }

  // Every row of every table, as a backup would copy it, but the tax documents the law keeps.
  const tables = await t.database.query<{ name: string }>("select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> 'tax_documents'");
  for (const { name } of tables) {
    for (const needle of needles) {
      // The usage log keeps the SQL a caller typed, here this test's own search by the old name
      // after the erasure: what was asked, not data held about the tutor.
      const ownSearch = name === "mcp_usage_log" ? " and x.sql_text is distinct from $2" : "";
      const [found] = await t.database.query<{ n: number }>(`select count(*)::int as n from "${name}" x where x::text ilike $1${ownSearch}`, ownSearch ? [`%${needle}%`, SEARCH_BY_ERASED_NAME] : [`%${needle}%`]);
      expect({ table: name, needle, n: found!.n }).toEqual({ table: name, needle, n: 0 });
    }
  }

  const exported = await owner.as("GET", `/api/v1/tutors/${tutorId}/export`);
  expect(exported.status).toBe(200);
  for (const needle of needles) expect(exported.text).not.toContain(needle);
  expect(exported.text).toContain("tutor.erased");

  // Deliveries queued before the erasure carry the event log's values as they are now.
  while ((await t.context.webhooks.dispatcher.runOnce()) > 0);
  expect(receiver.received.length).toBeGreaterThan(0);
  for (const delivery of receiver.received) for (const needle of needles) expect(delivery.body).not.toContain(needle);
  expect(receiver.received.some((delivery) => JSON.parse(delivery.body).type === "tutor.erased")).toBe(true);

  // Erased once: a second request is a conflict.
  expect((await owner.as("POST", `/api/v1/tutors/${tutorId}/erase`, { json: { confirm_name: "dato bloqueado" } })).status).toBe(409);
});
