import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

/**
 * Two server processes on one PostgreSQL database, as behind a load balancer. Runs when
 * DATABASE_URL is a PostgreSQL URL; an embedded database cannot be shared, so it is skipped there.
 */
const FLUSH_MS = 100;
let pg: TestDatabase;
let a: ServerProcess;
let b: ServerProcess;
let ownerToken: string;

describe.skipIf(!POSTGRES_URL)("two instances sharing PostgreSQL", () => {
  beforeAll(async () => {
    pg = await createTestDatabase();
    const env = { ...pg.serverEnv!, QUOTA_FLUSH_MS: String(FLUSH_MS) };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    const owner = await call(a.baseUrl, "POST", "/api/v1/auth/register", {
      json: { email: "multi@clinic.test", password: "a long password", name: "M", clinic_name: "Multi" },
    });
    ownerToken = owner.body.access_token;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await pg?.destroy();
  }, SERVER_STOP_TIMEOUT_MS);

  const newKey = async (limit: number) => {
    const r = await call(a.baseUrl, "POST", "/api/v1/mcp/keys", { token: ownerToken, json: { name: "k", scopes: ["clinic_context"], rate_limit_per_day: limit } });
    expect(r.status, r.text).toBe(201);
    return r.body as { id: string; api_key: string };
  };
  const invoke = (server: ServerProcess, key: string) => call(server.baseUrl, "POST", "/mcp/tools/get_clinic_context/invoke", { token: key, json: {} });

  /**
   * The first answer of `server` to `key` that is not a 200, calling again until `withinMs` after
   * the change committed: the other instance hears of it by a notice, usually before its next
   * call, always within the second the service promises.
   */
  const refusalWithin = async (server: ServerProcess, key: string, since: number, withinMs = 1_000) => {
    for (;;) {
      const answer = await invoke(server, key);
      if (answer.status !== 200 || performance.now() - since > withinMs) return { answer, afterMs: performance.now() - since };
    }
  };

  test("a key revoked through one instance is refused by the other within a second", async () => {
    const key = await newKey(1000);
    expect((await invoke(b, key.api_key)).status).toBe(200); // b now has the key cached
    const revoked = await call(a.baseUrl, "DELETE", `/api/v1/mcp/keys/${key.id}`, { token: ownerToken });
    expect(revoked.status, revoked.text).toBe(204);
    const { answer: refused, afterMs } = await refusalWithin(b, key.api_key, performance.now());
    expect(refused.status, refused.text).toBe(401);
    expect(refused.body.code).toBe("API_KEY_REVOKED");
    expect(afterMs).toBeLessThanOrEqual(1_000);
  });

  test("a key rotated through one instance stops working on the other within a second", async () => {
    const key = await newKey(1000);
    expect((await invoke(b, key.api_key)).status).toBe(200);
    const rotated = await call(a.baseUrl, "POST", `/api/v1/mcp/keys/${key.id}/rotate`, { token: ownerToken });
    const { answer: refused, afterMs } = await refusalWithin(b, key.api_key, performance.now());
    expect(refused.status, refused.text).toBe(401);
    expect(afterMs).toBeLessThanOrEqual(1_000);
    expect((await invoke(b, rotated.body.api_key)).status).toBe(200);
  });

  test("a key rotated while the other instance is answering calls with it: the old value is refused there within 1 s, and stays refused", async () => {
    for (let round = 0; round < 3; round++) {
      const key = await newKey(100_000);
      expect((await invoke(b, key.api_key)).status).toBe(200);
      // Calls keep arriving at b while a rotates the key: some read the key before the rotation commits.
      let calling = true;
      const during = (async () => {
        while (calling) await invoke(b, key.api_key);
      })();
      const rotated = await call(a.baseUrl, "POST", `/api/v1/mcp/keys/${key.id}/rotate`, { token: ownerToken });
      expect(rotated.status, rotated.text).toBe(200);
      const rotatedAt = performance.now();
      calling = false;
      await during;
      let refusedAfter: number | undefined;
      while (refusedAfter === undefined && performance.now() - rotatedAt < 3_000) if ((await invoke(b, key.api_key)).status === 401) refusedAfter = performance.now() - rotatedAt;
      expect(refusedAfter, `round ${round}`).toBeDefined();
      expect(refusedAfter!, `round ${round}`).toBeLessThanOrEqual(1_000);
      for (let i = 0; i < 5; i++) for (const server of [a, b]) expect((await invoke(server, key.api_key)).status).toBe(401);
      expect((await invoke(b, rotated.body.api_key)).status).toBe(200);
    }
  }, 30_000);

  /**
   * The bound: an instance admits only what it believes remains (database total at its last
   * flush, plus its own calls since). So N instances admit at most limit + (N − 1) × the
   * remaining quota each saw at its last flush; flushes every QUOTA_FLUSH_MS shrink that
   * window, and the totals converge to what the database holds.
   */
  test("the daily limit is exceeded by at most what the other instance admits in one flush window", async () => {
    const limit = 20;
    const key = await newKey(limit);
    // Both instances start from the same known total (0) and are hit at once.
    const results = await Promise.all(Array.from({ length: 2 * limit }, (_, i) => invoke(i % 2 ? a : b, key.api_key)));
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(limit);
    expect(admitted).toBeLessThanOrEqual(2 * limit);

    // Once both have flushed and adopted the total, neither admits anything more.
    let settled = false;
    for (let attempt = 0; attempt < 100 && !settled; attempt++) {
      const [row] = await pg.query<{ count: number }>("select count from quota_counters where api_key_id = $1", [key.id]);
      const extraA = await invoke(a, key.api_key);
      const extraB = await invoke(b, key.api_key);
      settled = (row?.count ?? 0) >= limit && extraA.status === 429 && extraB.status === 429;
      if (!settled) await Bun.sleep(FLUSH_MS);
    }
    expect(settled).toBe(true);
    const [final] = await pg.query<{ count: number }>("select count from quota_counters where api_key_id = $1", [key.id]);
    expect(final!.count).toBeLessThanOrEqual(2 * limit);
    const refusal = await invoke(a, key.api_key);
    expect(refusal.body.code).toBe("RATE_LIMIT_EXCEEDED");
  }, 60_000);
});
