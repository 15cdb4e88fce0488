import { expect, test } from "bun:test";
import { call, startServer, type ServerProcess } from "../helpers/server-process";
import { useServerStore } from "../helpers/server-store";

/**
 * Servers killed with SIGKILL while calls are in flight and flushes run every few milliseconds:
 * the quota counter and the usage rows still agree, because a call is counted by the
 * transaction that writes its row. On PostgreSQL three instances share the key; on the embedded
 * database, one.
 */
const store = useServerStore("quota-kill");
const serverEnv = () => store.env({ QUOTA_FLUSH_MS: "10" });
const readBack = store.read;

test("after SIGKILL under load, every key's counter equals its counted usage rows", async () => {
  const first = await startServer(serverEnv());
  const owner = await call(first.baseUrl, "POST", "/api/v1/auth/register", {
    json: { email: "kill@clinic.test", password: "a long password", name: "K", clinic_name: "Kill" },
  });
  expect(owner.status, owner.text).toBe(201);
  expect(await first.stop()).toBe(0);
  // The burst cap out of the way, so that calls keep being admitted until the kills.
  await readBack((database) => database.query("update clinics set plan = 'enterprise', burst_per_minute = 1000000 where id = $1", [owner.body.clinic.id]));
  const instances = store.pg ? 3 : 1;
  const servers: ServerProcess[] = [];
  for (let i = 0; i < instances; i++) servers.push(await startServer(serverEnv()));
  // Two keys: one that reaches its daily limit (grants of one call), one far from it (shares).
  const keys: { id: string; api_key: string }[] = [];
  for (const limit of [200, 100_000]) {
    const key = await call(servers[0]!.baseUrl, "POST", "/api/v1/mcp/keys", { token: owner.body.access_token, json: { name: "k", scopes: ["clinic_context"], rate_limit_per_day: limit } });
    expect(key.status, key.text).toBe(201);
    keys.push(key.body as { id: string; api_key: string });
  }

  let answered = 0;
  let stopped = false;
  const alive = new Set(servers);
  const worker = async (index: number) => {
    for (let n = index; !stopped; n++) {
      const server = [...alive][n % Math.max(1, alive.size)];
      if (!server) return;
      try {
        const r = await fetch(`${server.baseUrl}/mcp/tools/get_clinic_context/invoke`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys[n % 2]!.api_key}`, "content-type": "application/json" },
          body: "{}",
        });
        await r.arrayBuffer();
        answered++;
      } catch {
        // The server was killed under this call.
      }
    }
  };
  const workers = Promise.all(Array.from({ length: 32 }, (_, i) => worker(i)));
  const answeredAtLeast = async (n: number) => {
    while (answered < n) await new Promise((resolve) => setImmediate(resolve));
  };
  // Kill the instances one by one, each in the middle of the load.
  for (const [i, server] of servers.entries()) {
    await answeredAtLeast(150 * (i + 1));
    process.kill(server.pid, "SIGKILL");
    alive.delete(server);
    await server.stop().catch(() => {});
  }
  stopped = true;
  await workers;

  const stored = await readBack((database) =>
    database.query<{ api_key_id: string; count: number; held: number; rows: number }>(
      `select q.api_key_id, q.count, q.held,
              (select count(*)::int from mcp_usage_log u where u.api_key_id = q.api_key_id and u.outcome <> 'rate_limited') as rows
       from quota_counters q`,
    ),
  );
  expect(stored.length).toBe(2);
  for (const row of stored) {
    expect(row.count).toBeGreaterThan(0);
    expect(row.count).toBe(row.rows);
    expect(row.held).toBeGreaterThanOrEqual(0);
  }
  const limited = stored.find((row) => row.api_key_id === keys[0]!.id)!;
  expect(limited.count + limited.held).toBeLessThanOrEqual(200);
}, 120_000);
