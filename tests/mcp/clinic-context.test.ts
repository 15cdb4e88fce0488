import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { alerts, invoices, payments, refunds, tutors, visits } from "../../src/db/schema";
import { newId } from "../../src/lib/crypto";
import type { ClinicContextResult } from "../../src/modules/mcp/tools/clinic-context";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
import { createKey, invoke } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;

// Santiago is UTC-3 on this date: the clinic's day runs from 03:00Z to 03:00Z.
const NOW = "2026-03-10T15:00:00Z";
const at = (iso: string) => new Date(iso);

beforeAll(async () => {
  t = await createTestApp();
  t.clock.set(NOW);
  owner = await registerClinic(t, { timezone: "America/Santiago" });
  other = await registerClinic(t, { timezone: "America/Santiago" });
  await seedFigures(owner.clinic.id);
  await seedFigures(other.clinic.id, 50); // another clinic's rows, which must never count
});
afterAll(() => t.close());

async function seedFigures(clinicId: string, scale = 1) {
  const db = t.database.db;
  const stamp = { clinic_id: clinicId, created_at: at(NOW), updated_at: at(NOW) };
  const tutorId = newId();
  await db.insert(tutors).values([
    { ...stamp, id: tutorId, name: "Today A", created_at: at("2026-03-10T03:00:00Z") },
    { ...stamp, id: newId(), name: "Today B", created_at: at("2026-03-11T02:59:59Z") },
    { ...stamp, id: newId(), name: "Deleted today", deleted_at: at(NOW) },
    { ...stamp, id: newId(), name: "Yesterday (local)", created_at: at("2026-03-10T02:59:59Z") },
  ]);
  const invoice = (total: number, extra: Partial<typeof invoices.$inferInsert> = {}) => ({
    ...stamp, id: newId(), tutor_id: tutorId, status: "emitted" as const, currency: "CLP", net_amount: total, tax_amount: 0, total_amount: total * scale, paid_amount: 0, emitted_at: at("2026-03-10T12:00:00Z"), ...extra,
  });
  const paid = invoice(100_000, { status: "paid" });
  await db.insert(invoices).values([
    invoice(1000),
    invoice(2001),
    paid,
    invoice(999_999, { status: "void" }),
    invoice(888_888, { deleted_at: at(NOW) }),
    invoice(777_777, { status: "draft", emitted_at: null }),
    invoice(666_666, { emitted_at: at("2026-03-09T12:00:00Z") }),
  ]);
  const payment = (amount: number, paidAt: string, extra: Partial<typeof payments.$inferInsert> = {}) => ({
    ...stamp, id: newId(), invoice_id: paid.id, amount: amount * scale, currency: "CLP", method: "cash", paid_at: at(paidAt), ...extra,
  });
  const kept = payment(10_000, "2026-03-10T14:00:00Z");
  await db.insert(payments).values([
    kept,
    payment(3_000, "2026-03-10T03:00:00Z"),
    payment(5_000, "2026-03-10T02:00:00Z"),
    payment(7_000, "2026-03-10T14:00:00Z", { deleted_at: at(NOW) }),
  ]);
  await db.insert(refunds).values([
    { ...stamp, id: newId(), payment_id: kept.id, invoice_id: paid.id, amount: 2_000 * scale, currency: "CLP", refunded_at: at("2026-03-10T16:00:00Z") },
    { ...stamp, id: newId(), payment_id: kept.id, invoice_id: paid.id, amount: 500 * scale, currency: "CLP", refunded_at: at("2026-03-09T16:00:00Z") },
  ]);
  const visit = (status: "scheduled" | "completed" | "no_show" | "cancelled", scheduledAt: string, extra: Partial<typeof visits.$inferInsert> = {}) => ({
    ...stamp, id: newId(), patient_id: newId(), status, scheduled_at: at(scheduledAt), ...extra,
  });
  await db.insert(visits).values([
    visit("scheduled", "2026-03-10T20:00:00Z"),
    visit("completed", "2026-03-10T13:00:00Z"),
    visit("no_show", "2026-03-10T03:30:00Z"),
    visit("cancelled", "2026-03-10T18:00:00Z"),
    visit("scheduled", "2026-03-10T18:00:00Z", { deleted_at: at(NOW) }),
    visit("scheduled", "2026-03-11T04:00:00Z"),
  ]);
  const alert = (status: "active" | "resolved", extra: Partial<typeof alerts.$inferInsert> = {}) => ({
    ...stamp, id: newId(), kind: "vaccine_due", message: "Rabies booster", status, ...extra,
  });
  await db.insert(alerts).values([alert("active"), alert("active"), alert("resolved"), alert("active", { deleted_at: at(NOW) })]);
}

const EXPECTED = {
  revenue_today: 10_000 + 3_000 - 2_000,
  visits_today: 3,
  avg_ticket: Math.round((1000 + 2001 + 100_000) / 3),
  new_tutors_today: 2,
  active_alerts: 2,
  currency: "CLP",
};

test("every figure matches the hand-computed answer; deleted, void and other-day rows excluded", async () => {
  const key = await createKey(owner, { scopes: ["clinic_context"] });
  const r = await invoke(t, key.api_key, "get_clinic_context");
  expect(r.status, r.text).toBe(200);
  expect(r.body).toEqual({ clinic_id: owner.clinic.id, ...EXPECTED, timezone: owner.clinic.timezone, as_of: NOW });
});

test("figures are cached per clinic for 5 minutes", async () => {
  t.clock.set(NOW);
  owner = await relogin(t, owner);
  const key = await createKey(owner, { scopes: ["clinic_context"] });
  const first = await invoke(t, key.api_key, "get_clinic_context");
  const extra = newId();
  await t.database.db.insert(alerts).values({ id: extra, clinic_id: owner.clinic.id, kind: "custom", message: "New", status: "active", created_at: t.clock.now(), updated_at: t.clock.now() });
  t.clock.advance(4 * 60_000 + 59_000);
  const cached = await invoke(t, key.api_key, "get_clinic_context");
  expect(cached.body, cached.text).toEqual(first.body);
  t.clock.advance(1_000);
  const fresh = await invoke<ClinicContextResult>(t, key.api_key, "get_clinic_context");
  expect(fresh.body.active_alerts, fresh.text).toBe(EXPECTED.active_alerts + 1);
  expect(fresh.body.as_of).toBe("2026-03-10T15:05:00Z");
  await t.database.query("update alerts set deleted_at = updated_at where id = $1", [extra]);
});

test("the official SDK client connects, lists tools and gets the same figures; one quota for both surfaces", async () => {
  t.clock.set("2026-03-10T15:30:00Z");
  owner = await relogin(t, owner);
  const key = await createKey(owner, { scopes: ["clinic_context", "read"], rate_limit_per_day: 10 });
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key.api_key}` } },
    fetch: (url, init) => t.app.handle(new Request(String(url), init)),
  });
  const client = new Client({ name: "clinic-test", version: "1.0.0" });
  await client.connect(transport);
  expect(client.getServerVersion()?.name).toBe("vet-clinic-service");

  const { tools } = await client.listTools();
  const context = tools.find((tool) => tool.name === "get_clinic_context")!;
  expect(context.annotations?.readOnlyHint).toBe(true);
  expect(context.inputSchema.type).toBe("object");
  expect(context.outputSchema?.properties).toHaveProperty("revenue_today");

  const viaMcp = await client.callTool({ name: "get_clinic_context", arguments: {} });
  expect(viaMcp.isError, JSON.stringify(viaMcp)).toBeFalsy();
  const viaInvoke = await invoke(t, key.api_key, "get_clinic_context");
  expect(viaMcp.structuredContent).toEqual(viaInvoke.body);
  expect(viaInvoke.body).toMatchObject(EXPECTED);
  // One call through each surface: 10 - 2 left.
  expect(viaInvoke.headers.get("x-ratelimit-remaining")).toBe("8");
  await client.close();
});

test("through MCP, a missing scope or an exhausted quota is a tool error carrying the envelope", async () => {
  const key = await createKey(owner, { scopes: ["read"], rate_limit_per_day: 1 });
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key.api_key}` } },
    fetch: (url, init) => t.app.handle(new Request(String(url), init)),
  });
  const client = new Client({ name: "clinic-test", version: "1.0.0" });
  await client.connect(transport);
  const denied = await client.callTool({ name: "get_clinic_context", arguments: {} });
  expect(denied.isError).toBe(true);
  expect(denied.structuredContent).toBeUndefined();
  const envelope = JSON.parse((denied.content as { text: string }[])[0]!.text);
  expect(envelope.code).toBe("INSUFFICIENT_SCOPE");
  const limited = await client.callTool({ name: "get_clinic_context", arguments: {} });
  expect(JSON.parse((limited.content as { text: string }[])[0]!.text).code).toBe("RATE_LIMIT_EXCEEDED");
  await client.close();
});

test("POST /mcp: no key is 401, a foreign Origin is 403, GET and DELETE are 405", async () => {
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } } };
  const headers = { accept: "application/json, text/event-stream" };
  const noKey = await t.request("POST", "/mcp", { json: initialize, headers });
  expect(noKey.status, noKey.text).toBe(401);
  const key = await createKey(owner);
  const foreign = await t.request("POST", "/mcp", { json: initialize, token: key.api_key, headers: { ...headers, origin: "https://evil.example" } });
  expect(foreign.status, foreign.text).toBe(403);
  const ok = await t.request<{ result: { protocolVersion: string } }>("POST", "/mcp", { json: initialize, token: key.api_key, headers });
  expect(ok.status, ok.text).toBe(200);
  expect(ok.body.result.protocolVersion).toBe("2025-11-25");
  for (const method of ["GET", "DELETE"]) {
    const r = await t.request(method, "/mcp", { token: key.api_key });
    expect(r.status, r.text).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
  }
});

test("another clinic's key sees only its own clinic", async () => {
  other = await relogin(t, other);
  const key = await createKey(other, { scopes: ["clinic_context"] });
  const r = await invoke<ClinicContextResult>(t, key.api_key, "get_clinic_context");
  expect(r.body.clinic_id).toBe(other.clinic.id);
  expect(r.body.revenue_today).toBe(EXPECTED.revenue_today * 50);
});
