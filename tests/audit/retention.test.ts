import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { DAY } from "../../src/lib/clock";
import type { CursorPageBody } from "../../src/http/pagination";
import { testConfig, type TestApp } from "../helpers/app";
import { relogin, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { config: { webhooks: { ...testConfig().webhooks, eventsRetentionDays: 30 } } });

const tutor = async (name: string) => {
  const r = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name } });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
/** Moves the app's clock on, signing in again (the session's token has expired by then). */
const later = async (ms: number) => {
  t.clock.advance(ms);
  owner = await relogin(t, owner);
};
const eventsOf = async (entityId: string) => (await t.database.query<{ n: number }>(`select count(*)::int as n from events where entity_id = '${entityId}'`))[0]!.n;
const deliveriesOf = async (entityId: string) =>
  (await t.database.query<{ state: string }>(`select d.state from webhook_deliveries d join events e on e.id = d.event_id where e.entity_id = '${entityId}' order by d.state`)).map((row) => row.state);

test("EVENTS_RETENTION_DAYS: unset keeps events forever; a whole number of days is the retention", () => {
  expect(loadConfig({ JWT_SECRET: "x".repeat(40), DATA_DIR: "/nonexistent" }).webhooks.eventsRetentionDays).toBeNull();
  expect(loadConfig({ JWT_SECRET: "x".repeat(40), DATA_DIR: "/nonexistent", EVENTS_RETENTION_DAYS: "365" }).webhooks.eventsRetentionDays).toBe(365);
  expect(() => loadConfig({ JWT_SECRET: "x".repeat(40), DATA_DIR: "/nonexistent", EVENTS_RETENTION_DAYS: "0" })).toThrow("EVENTS_RETENTION_DAYS");
});

test("the daily job deletes events older than the retention with their finished deliveries; a pending delivery keeps its event", async () => {
  // A webhook nobody answers: its deliveries stay pending until the dispatcher runs.
  const hook = (await owner.as<{ id: string }>("POST", "/api/v1/webhooks", { json: { url: "http://127.0.0.1:9/retention", events: ["tutor.created"] } })).body.id;
  const old = await tutor("Old");
  const oldPending = await tutor("Old, still pending");
  // The old tutor's delivery finished (given up); the other's is still pending.
  await t.database.query(`update webhook_deliveries set state = 'failed', next_attempt_at = null where event_id in (select id from events where entity_id = '${old}')`);
  await later(29 * DAY);
  const recent = await tutor("Recent");
  expect(await t.context.webhooks.retention.runOnce()).toEqual({ events: 0, deliveries: 0 });

  await later(2 * DAY); // the first two are now 31 days old, the recent one 2
  const removed = await t.context.webhooks.retention.runOnce();
  expect(removed.deliveries).toBeGreaterThanOrEqual(1);
  expect(await eventsOf(old)).toBe(0);
  expect(await deliveriesOf(old)).toEqual([]);
  expect(await eventsOf(oldPending)).toBe(1);
  expect(await deliveriesOf(oldPending)).toEqual(["pending"]);
  expect(await eventsOf(recent)).toBe(1);
  expect(await deliveriesOf(recent)).toEqual(["pending"]);
  // The audit trail no longer shows the old change; the records themselves are untouched.
  const trail = await owner.as<CursorPageBody<{ entity: { id: string } }>>("GET", `/api/v1/audit?entity_id=${old}`);
  expect(trail.body.data).toEqual([]);
  expect((await owner.as("GET", `/api/v1/tutors/${old}`)).status).toBe(200);
  // Once that delivery finishes, the next day's run takes its event too.
  await t.database.query(`update webhook_deliveries set state = 'succeeded', next_attempt_at = null where endpoint_id = '${hook}'`);
  await later(DAY);
  await t.context.webhooks.retention.runOnce();
  expect(await eventsOf(oldPending)).toBe(0);
  expect(await eventsOf(recent)).toBe(1);
});

test("without a retention the job removes nothing", async () => {
  const { EventRetention } = await import("../../src/modules/audit/retention");
  const keep = new EventRetention({ database: t.context.database, clock: t.clock, logger: t.context.logger }, null);
  const kept = await tutor("Kept");
  await later(10_000 * DAY);
  expect(await keep.runOnce()).toEqual({ events: 0, deliveries: 0 });
  expect(await eventsOf(kept)).toBe(1);
});
