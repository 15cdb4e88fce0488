import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import { rfc3339 } from "../../src/lib/time";
import { planReminders } from "../../src/modules/reminders/planner";
import { makeIssuer } from "../billing/sii-fixtures";
import { draft, emitted, pay } from "../billing/helpers";
import type { TestApp } from "../helpers/app";
import { uniqueEmail, PASSWORD, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { authorize, discover, exchange, registerClient } from "../oauth/helpers";

/**
 * Delta sync on every list: each list route of /openapi.json either declares `updated_since` and
 * answers with what changed after the mark (and not what changed before it), or is listed below
 * with the reason it is not a list of changing records.
 */
let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

/** Lists that are not records of their own (views, logs), with where their changes are found. */
const NOT_RECORDS: Record<string, string> = {
  "/api/v1/vaccinations/due": "a computed view of open due dates; /patients/{id}/vaccinations syncs the vaccinations",
  "/api/v1/patients/{id}/timeline": "a view over the clinical lists, each of which syncs",
  "/api/v1/operations/visits": "the visit board, a view of /visits, which syncs",
  "/api/v1/mcp/usage": "an append-only log, filtered by date_from/date_to",
  "/api/v1/audit": "the event log itself, append-only, filtered by date_from/date_to",
  "/api/v1/webhooks/{id}/deliveries": "an attempt log of one webhook, newest first",
};

const created = async (path: string, json: unknown) => {
  const r = await owner.as<{ id: string }>("POST", path, { json });
  expect(r.status, `${path}: ${r.text}`).toBeOneOf([200, 201]);
  return r.body.id;
};
const tutor = () => created("/api/v1/tutors", { name: "Sync" });
const patient = async () => created("/api/v1/patients", { tutor_id: await tutor(), name: "Sync", species: "dog" });
const visit = async () => created("/api/v1/visits", { patient_id: await patient(), scheduled_at: rfc3339(t.clock.now()) });
let letters = 0;
const day = (offsetDays: number) => new Date(t.clock.now().getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);
const reminderRule = () => created("/api/v1/reminder-rules", { kind: "vaccination_due", name: `Sync ${letters++}`, offset: "-7d", channels: ["email"] });
let vaccinationRule: Promise<string> | undefined;
/** A reminder in the outbox: a due vaccination of a patient whose tutor agreed to e-mail, planned. */
async function reminder() {
  vaccinationRule ??= reminderRule();
  await vaccinationRule;
  const patientId = await patient();
  const [owned] = await t.database.query<{ tutor_id: string }>("select tutor_id from patients where id = $1", [patientId]);
  expect((await owner.as("POST", `/api/v1/tutors/${owned!.tutor_id}/consents`, { json: { channel: "email", purpose: "reminders", granted: true } })).status).toBe(201);
  const vaccination = await created(`/api/v1/patients/${patientId}/vaccinations`, { vaccine: "Sync", diseases: [`sync${letters++}`], next_due_on: day(3) });
  await planReminders(t.database, t.clock.now(), new Date(t.clock.now().getTime() + 86_400_000), ["email"]);
  const [message] = await t.database.query<{ id: string }>("select id from reminder_messages where subject_id = $1", [vaccination]);
  return message!.id;
}

/** Per list route: its parent (for nested lists) and how one more record of it is made. */
const RECORDS: Record<string, { parent?: () => Promise<string>; make: (parent: string) => Promise<string> }> = {
  "/api/v1/users": { make: () => created("/api/v1/users", { email: uniqueEmail("sync"), name: "Sync", role: "staff", password: PASSWORD }) },
  "/api/v1/tutors": { make: tutor },
  "/api/v1/patients": { make: patient },
  "/api/v1/visits": { make: visit },
  "/api/v1/appointment-types": { make: () => created("/api/v1/appointment-types", { name: `Sync ${letters++}`, duration_minutes: 30 }) },
  "/api/v1/rooms": { make: () => created("/api/v1/rooms", { name: `Sync ${letters++}` }) },
  "/api/v1/alerts": { make: async () => created("/api/v1/alerts", { patient_id: await patient(), kind: "follow_up", message: "Control" }) },
  "/api/v1/visits/{id}/notes": { parent: visit, make: (id) => created(`/api/v1/visits/${id}/notes`, { subjective: "Sync" }) },
  "/api/v1/patients/{id}/vitals": { parent: patient, make: (id) => created(`/api/v1/patients/${id}/vitals`, { weight_grams: 12_000 }) },
  "/api/v1/patients/{id}/vaccinations": { parent: patient, make: (id) => created(`/api/v1/patients/${id}/vaccinations`, { vaccine: "Sync", diseases: [`sync${letters++}`] }) },
  "/api/v1/patients/{id}/prescriptions": { parent: patient, make: (id) => created(`/api/v1/patients/${id}/prescriptions`, { drug: "Sync", dose: "1", route: "oral", frequency: "daily" }) },
  "/api/v1/billing/invoices": { make: async () => (await draft(owner, [{ quantity: 1, unit_price: 1000 }])).id },
  "/api/v1/billing/payments": { make: async () => (await pay<{ id: string }>(owner, (await emitted(owner, [{ quantity: 1, unit_price: 1000 }])).id, 1000)).body.id },
  "/api/v1/billing/refunds": {
    make: async () => {
      const payment = (await pay<{ id: string }>(owner, (await emitted(owner, [{ quantity: 1, unit_price: 1000 }])).id, 1000)).body.id;
      return created("/api/v1/billing/refunds", { payment_id: payment, amount: 1000, reason: "Sync" });
    },
  },
  "/api/v1/billing/sii/documents": {
    parent: async () => {
      await makeIssuer(owner, [39]);
      return "";
    },
    make: async () => created("/api/v1/billing/sii/documents", { doc_type: 39, invoice_id: (await emitted(owner, [{ quantity: 1, unit_price: 1000 }])).id }),
  },
  "/api/v1/mcp/keys": { make: () => created("/api/v1/mcp/keys", { name: "Sync", scopes: ["read"] }) },
  "/api/v1/mcp/reports": { make: () => created("/api/v1/mcp/reports", { name: `sync_${letters++}`, title: "Sync", sql: "SELECT 1 AS one", parameters: [] }) },
  "/api/v1/mcp/connections": {
    make: async () => {
      // An assistant connects through OAuth: the connection is made when its code is exchanged.
      const as = await discover(t);
      const client = await registerClient(t);
      const answer = await exchange(t, as, client, await authorize(t, owner, client));
      expect(answer.status).toBe(200);
      const list = await owner.as<CursorPageBody<{ id: string; client_id: string }>>("GET", "/api/v1/mcp/connections?limit=200");
      return list.body.data.find((connection) => connection.client_id === client.client_id)!.id;
    },
  },
  "/api/v1/webhooks": { make: () => created("/api/v1/webhooks", { url: "http://127.0.0.1:9/sync", events: ["*"] }) },
  "/api/v1/reminder-rules": { make: reminderRule },
  "/api/v1/reminders": { make: reminder },
  "/api/v1/users/{id}/time-off": { parent: async () => owner.user.id, make: (id) => created(`/api/v1/users/${id}/time-off`, { starts_at: `${day(10 + letters)}T12:00:00Z`, ends_at: `${day(10 + letters++)}T14:00:00Z` }) },
  "/api/v1/clinic/closures": { make: () => created("/api/v1/clinic/closures", { day: day(40 + letters++) }) },
};

interface Operation {
  parameters?: { name: string; in: string }[];
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

test("every list route in /openapi.json declares updated_since and answers with what changed after it", async () => {
  const spec = (await t.request<{ paths: Record<string, { get?: Operation }> }>("GET", "/openapi.json")).body;
  const lists = Object.entries(spec.paths)
    .filter(([, ops]) => JSON.stringify(ops.get?.responses?.["200"] ?? {}).includes("next_cursor"))
    .map(([path, ops]) => ({ path, declared: (ops.get!.parameters ?? []).some((p) => p.in === "query" && p.name === "updated_since") }));
  expect(lists.length).toBeGreaterThan(15);
  // Every list is either synced or said not to be records; a new list must choose.
  expect(lists.filter((l) => !RECORDS[l.path] && !NOT_RECORDS[l.path]).map((l) => l.path)).toEqual([]);
  expect(lists.filter((l) => RECORDS[l.path] && !l.declared).map((l) => l.path)).toEqual([]);
  expect(Object.keys(RECORDS).filter((path) => !lists.some((l) => l.path === path))).toEqual([]);

  for (const [template, recipe] of Object.entries(RECORDS)) {
    const parent = recipe.parent ? await recipe.parent() : "";
    const path = template.replace("{id}", parent);
    const before = await recipe.make(parent);
    t.clock.advance(1000);
    const mark = rfc3339(t.clock.now());
    t.clock.advance(1000);
    const after = await recipe.make(parent);
    const answer = await owner.as<CursorPageBody<{ id: string; deleted_at: string | null }>>("GET", `${path}?updated_since=${encodeURIComponent(mark)}&limit=200`);
    expect(answer.status, `${template}: ${answer.text}`).toBe(200);
    const ids = answer.body.data.map((row) => row.id);
    expect(ids, template).toContain(after);
    expect(ids, template).not.toContain(before);
    expect(answer.body.data.find((row) => row.id === after)?.deleted_at, template).toBeNull();
    // Delta sync takes no other filter, and refuses what is not an instant.
    expect((await owner.as("GET", `${path}?updated_since=yesterday`)).status, template).toBe(422);
  }
});

test("a record deleted after the mark comes back with its deleted_at (webhooks, users, reminder rules, time off, closures)", async () => {
  const hook = await created("/api/v1/webhooks", { url: "http://127.0.0.1:9/gone", events: ["*"] });
  const user = await created("/api/v1/users", { email: uniqueEmail("gone"), name: "Gone", role: "staff", password: PASSWORD });
  const rule = await reminderRule();
  const timeOff = await created(`/api/v1/users/${owner.user.id}/time-off`, { starts_at: `${day(90)}T12:00:00Z`, ends_at: `${day(90)}T14:00:00Z` });
  const closure = await created("/api/v1/clinic/closures", { day: day(91) });
  t.clock.advance(1000);
  const mark = rfc3339(t.clock.now());
  t.clock.advance(1000);
  const deleted: [string, string, string][] = [
    ["/api/v1/webhooks", hook, `/api/v1/webhooks/${hook}`],
    ["/api/v1/users", user, `/api/v1/users/${user}`],
    ["/api/v1/reminder-rules", rule, `/api/v1/reminder-rules/${rule}`],
    [`/api/v1/users/${owner.user.id}/time-off`, timeOff, `/api/v1/users/${owner.user.id}/time-off/${timeOff}`],
    ["/api/v1/clinic/closures", closure, `/api/v1/clinic/closures/${closure}`],
  ];
  for (const [, , route] of deleted) expect((await owner.as("DELETE", route)).status, route).toBe(204);
  for (const [path, id] of deleted) {
    const answer = await owner.as<CursorPageBody<{ id: string; deleted_at: string | null }>>("GET", `${path}?updated_since=${encodeURIComponent(mark)}`);
    expect(answer.body.data.map((row) => [row.id, row.deleted_at]), path).toEqual([[id, rfc3339(t.clock.now())]]);
    expect((await owner.as<CursorPageBody<{ id: string }>>("GET", `${path}?limit=200`)).body.data.map((row) => row.id), path).not.toContain(id);
  }
});
