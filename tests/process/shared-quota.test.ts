import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

/**
 * One quota across server processes on one PostgreSQL database, tested as Unkey tests its
 * limiter: loads of 0.9×, 1× and 10× the limit spread over 1 and 3 instances; the admitted total
 * must be within 5 % of the limit, and at 0.9× every call is admitted. An embedded database
 * cannot be shared by processes, so this is skipped there (tests/mcp/shared-quota.test.ts runs
 * the same loads over in-process instances on both databases).
 */
const FLUSH_MS = 200;
/** Calls in flight at once over all instances. */
const CONCURRENCY = 48;
let pg: TestDatabase;
let servers: ServerProcess[] = [];
let unburstedOwner: string;
let standardOwner: string;

const register = async (server: ServerProcess, label: string) => {
  const r = await call(server.baseUrl, "POST", "/api/v1/auth/register", {
    json: { email: `${label}@quota.test`, password: "a long password", name: label, clinic_name: label },
  });
  expect(r.status, r.text).toBe(201);
  return r.body as { access_token: string; clinic: { id: string } };
};

const newKey = async (token: string, limit: number) => {
  const r = await call(servers[0]!.baseUrl, "POST", "/api/v1/mcp/keys", { token, json: { name: "k", scopes: ["clinic_context"], rate_limit_per_day: limit } });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; api_key: string; burst_per_minute: number };
};

/** `calls` calls, at most CONCURRENCY at once, dealt round-robin to the first `instances` servers. */
async function load(key: string, calls: number, instances: number): Promise<{ admitted: number; seconds: number }> {
  const started = performance.now();
  let next = 0;
  let admitted = 0;
  const worker = async () => {
    while (next < calls) {
      const server = servers[next++ % instances]!;
      const r = await fetch(`${server.baseUrl}/mcp/tools/get_clinic_context/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: "{}",
      });
      await r.arrayBuffer();
      expect([200, 429]).toContain(r.status);
      if (r.status === 200) admitted++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { admitted, seconds: (performance.now() - started) / 1000 };
}

const within5Percent = (admitted: number, limit: number) => {
  expect(admitted).toBeGreaterThanOrEqual(Math.ceil(limit * 0.95));
  expect(admitted).toBeLessThanOrEqual(Math.floor(limit * 1.05));
};

describe.skipIf(!POSTGRES_URL)("one quota across server processes on PostgreSQL", () => {
  beforeAll(async () => {
    pg = await createTestDatabase();
    const env = { DATABASE_URL: pg.url!, QUOTA_FLUSH_MS: String(FLUSH_MS) };
    servers = await Promise.all([startServer(env), startServer(env), startServer(env)]);
    const unbursted = await register(servers[0]!, "unbursted");
    await pg.query("update clinics set plan = 'enterprise', burst_per_minute = 1000000 where id = $1", [unbursted.clinic.id]);
    unburstedOwner = unbursted.access_token;
    standardOwner = (await register(servers[0]!, "standard")).access_token;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await pg?.destroy();
  }, SERVER_STOP_TIMEOUT_MS);

  for (const instances of [1, 3]) {
    const DAILY = 50;
    for (const [factor, calls] of [["0.9×", 45], ["1×", 50], ["10×", 500]] as const) {
      test(`${instances} instance(s): daily quota of ${DAILY} at ${factor} (${calls} calls)`, async () => {
        const key = await newKey(unburstedOwner, DAILY);
        const { admitted } = await load(key.api_key, calls, instances);
        console.log(`daily ${DAILY}, ${instances} instance(s), ${calls} calls: ${admitted} admitted`);
        if (calls < DAILY) expect(admitted).toBe(calls);
        else within5Percent(admitted, DAILY);
      }, 60_000);
    }

    const BURST = 60;
    for (const [factor, calls] of [["0.9×", 54], ["1×", 60], ["10×", 600]] as const) {
      test(`${instances} instance(s): burst cap of ${BURST} a minute at ${factor} (${calls} calls)`, async () => {
        const key = await newKey(standardOwner, 100_000);
        expect(key.burst_per_minute).toBe(BURST);
        const { admitted, seconds } = await load(key.api_key, calls, instances);
        console.log(`burst ${BURST}/min, ${instances} instance(s), ${calls} calls in ${seconds.toFixed(1)} s: ${admitted} admitted`);
        // The servers keep real time: the load must fit well inside one minute to test the cap.
        expect(seconds).toBeLessThan(45);
        if (calls < BURST) expect(admitted).toBe(calls);
        else within5Percent(admitted, BURST);
      }, 60_000);
    }
  }
});
