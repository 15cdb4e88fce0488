import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { createTestDatabase, type TestDatabase } from "../helpers/database";
import { createKey, invoke, storedQuota } from "./helpers";

/**
 * One quota across instances, tested as Unkey tests its limiter: loads of 0.9×, 1× and 10× the
 * limit, all at once, spread over 1 and 3 instances (apps over one database, one clock); the
 * admitted total must be within 5 % of the limit, and at 0.9× every call is admitted.
 * The apps are in process, so this runs on the embedded database too; the same loads through
 * server processes on PostgreSQL are in tests/process/shared-quota.test.ts.
 */
const clock = new ManualClock("2026-04-20T10:00:00Z");
let database: TestDatabase;
let apps: TestApp[];
/** A clinic whose burst cap is out of the way, for the daily quota; and one on the standard plan (60 a minute). */
let unbursted: ClinicSession;
let standard: ClinicSession;

beforeAll(async () => {
  database = await createTestDatabase();
  apps = [];
  for (let i = 0; i < 3; i++) apps.push(await createTestApp({ database, clock }));
  unbursted = await registerClinic(apps[0]!);
  standard = await registerClinic(apps[0]!);
  await database.query("update clinics set plan = 'enterprise', burst_per_minute = 1000000 where id = $1", [unbursted.clinic.id]);
}, 60_000);
afterAll(async () => {
  for (const app of apps ?? []) await app.close();
  await database?.destroy();
});

/** `calls` calls at once, dealt round-robin to the first `instances` apps; how many were admitted. */
async function load(key: string, calls: number, instances: number): Promise<number> {
  const results = await Promise.all(Array.from({ length: calls }, (_, i) => invoke(apps[i % instances]!, key, "get_clinic_context")));
  for (const r of results) expect([200, 429], r.text).toContain(r.status);
  return results.filter((r) => r.status === 200).length;
}

async function flushAll(): Promise<void> {
  for (const app of apps) await app.context.mcp.flush();
}

const within5Percent = (admitted: number, limit: number) => {
  expect(admitted).toBeGreaterThanOrEqual(Math.ceil(limit * 0.95));
  expect(admitted).toBeLessThanOrEqual(Math.floor(limit * 1.05));
};

for (const instances of [1, 3]) {
  describe(`${instances} instance${instances > 1 ? "s" : ""}`, () => {
    const DAILY = 50;
    for (const [factor, calls] of [["0.9×", 45], ["1×", 50], ["10×", 500]] as const) {
      test(`daily quota of ${DAILY} at ${factor} (${calls} calls)`, async () => {
        const key = await createKey(unbursted, { rate_limit_per_day: DAILY });
        const admitted = await load(key.api_key, calls, instances);
        if (calls < DAILY) expect(admitted).toBe(calls);
        else within5Percent(admitted, DAILY);
        // Every admitted call is counted, with its usage row, once the instances have flushed.
        await flushAll();
        expect(await storedQuota(apps[0]!, key.id)).toBe(admitted);
        const [rows] = await database.query<{ n: number }>("select count(*)::int as n from mcp_usage_log where api_key_id = $1 and outcome <> 'rate_limited'", [key.id]);
        expect(rows!.n).toBe(admitted);
      }, 60_000);
    }

    const BURST = 60;
    for (const [factor, calls] of [["0.9×", 54], ["1×", 60], ["10×", 600]] as const) {
      test(`burst cap of ${BURST} a minute at ${factor} (${calls} calls)`, async () => {
        const key = await createKey(standard, { rate_limit_per_day: 100_000 });
        expect(key.burst_per_minute).toBe(BURST);
        const admitted = await load(key.api_key, calls, instances);
        if (calls < BURST) expect(admitted).toBe(calls);
        else within5Percent(admitted, BURST);
        // The minute slides for every instance: a minute later the cap is free again. (An
        // instance's calls reach the shared minute with its next flush; until then they count
        // at their grant's end, a minute later than they should.)
        await flushAll();
        clock.advance(60_000);
        within5Percent(await load(key.api_key, 2 * BURST, instances), BURST);
        await flushAll();
      }, 60_000);
    }
  });
}

test("near its limit a key is refused by every instance, and the refusal says why", async () => {
  const key = await createKey(unbursted, { rate_limit_per_day: 3 });
  expect(await load(key.api_key, 3, 3)).toBe(3);
  for (const app of apps) {
    const refused = await invoke<{ code: string }>(app, key.api_key, "get_clinic_context");
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe("RATE_LIMIT_EXCEEDED");
  }
});

test("an instance that stops gives back what it was granted and did not use", async () => {
  const own = await createTestApp({ database, clock });
  const key = await createKey(unbursted, { rate_limit_per_day: 800 });
  // A call far from the limit takes a share of what is left, so the next ones need no round trip.
  expect((await invoke(own, key.api_key, "get_clinic_context")).status).toBe(200);
  const [held] = await database.query<{ held: number }>("select held from quota_counters where api_key_id = $1", [key.id]);
  expect(held!.held).toBe(800 / 16);
  await own.close();
  const [after] = await database.query<{ count: number; held: number }>("select count, held from quota_counters where api_key_id = $1", [key.id]);
  expect(after).toEqual({ count: 1, held: 0 });
  const next = await invoke(apps[1]!, key.api_key, "get_clinic_context");
  expect(next.headers.get("x-ratelimit-remaining")).toBe(String(800 - 2));
});

test("far from its limits, a key's next grant is asked for when the last is used up, before the next call comes", async () => {
  const key = await createKey(unbursted, { rate_limit_per_day: 800 });
  const held = async () => (await database.query<{ held: number }>("select held from quota_counters where api_key_id = $1", [key.id]))[0]!.held;
  for (let i = 0; i < 50; i++) expect((await invoke(apps[2]!, key.api_key, "get_clinic_context")).status).toBe(200);
  // The 50th call used up the first grant (800 / 16); the next share (750 / 16) is asked for
  // off the calls' path. Waited for by turns of the event loop, not by time.
  let seen = await held();
  for (let turn = 0; turn < 10_000 && seen === 50; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    seen = await held();
  }
  expect(seen).toBe(50 + Math.floor(750 / 16));
});
