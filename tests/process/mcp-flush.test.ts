import { expect, test } from "bun:test";
import { call, startServer } from "../helpers/server-process";
import { useServerStore } from "../helpers/server-store";

const store = useServerStore("flush");
// No periodic flush during the test: what reaches the database is the shutdown flush's doing.
const serverEnv = () => store.env({ QUOTA_FLUSH_MS: "600000" });
const readBack = store.read;

test("SIGTERM flushes every quota count and usage row; a restarted server continues from them", async () => {
  const first = await startServer(serverEnv());
  const owner = await call(first.baseUrl, "POST", "/api/v1/auth/register", {
    json: { email: "flush@clinic.test", password: "a long password", name: "F", clinic_name: "Flush" },
  });
  expect(owner.status, owner.text).toBe(201);
  const key = await call(first.baseUrl, "POST", "/api/v1/mcp/keys", { token: owner.body.access_token, json: { name: "k", scopes: ["clinic_context"], rate_limit_per_day: 100 } });
  expect(key.status, key.text).toBe(201);
  const outcomes: number[] = [];
  for (const tool of ["get_clinic_context", "get_clinic_context", "get_clinic_context", "get_clinic_context", "get_clinic_context", "no_such_tool", "describe_schema"]) {
    outcomes.push((await call(first.baseUrl, "POST", `/mcp/tools/${tool}/invoke`, { token: key.body.api_key, json: {} })).status);
  }
  expect(outcomes.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
  expect(await first.stop("SIGTERM")).toBe(0);

  const stored = await readBack(async (database) => ({
    quota: await database.query<{ count: number }>("select count from quota_counters where api_key_id = $1", [key.body.id]),
    usage: await database.query<{ n: number }>("select count(*)::int as n from mcp_usage_log where api_key_id = $1", [key.body.id]),
  }));
  expect(stored.quota.map((r) => r.count)).toEqual([7]);
  expect(stored.usage[0]!.n).toBe(7);

  const second = await startServer(serverEnv());
  const next = await call(second.baseUrl, "POST", "/mcp/tools/get_clinic_context/invoke", { token: key.body.api_key, json: {} });
  expect(next.status, next.text).toBe(200);
  expect(next.headers.get("x-ratelimit-remaining")).toBe(String(100 - 8));
  expect(await second.stop("SIGINT")).toBe(0);
  const after = await readBack((database) => database.query<{ count: number }>("select count from quota_counters where api_key_id = $1", [key.body.id]));
  expect(after[0]!.count).toBe(8);
}, 120_000);
