import { PGlite } from "@electric-sql/pglite";
import { createApp } from "../src/app";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase } from "../tests/helpers/database";
import { loadFromChild } from "./lib/load";
import { startBenchService } from "./lib/service";
import { databaseLabel, printTable } from "./lib/table";

const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

/** Database statements issued per warm `get_clinic_context` call, counted in process on PGlite. */
async function roundTripsPerCall(): Promise<number> {
  let statements = 0;
  for (const method of ["query", "exec"] as const) {
    const original = (PGlite.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!;
    (PGlite.prototype as unknown as Record<string, unknown>)[method] = function (this: PGlite, ...args: unknown[]) {
      statements++;
      return original.apply(this, args);
    };
  }
  const database = await createTestDatabase();
  const { app, context } = createApp({ database, config: testConfig({ quotaFlushMs: 3_600_000 }), clock: new ManualClock(), logger: silentLogger });
  const post = (path: string, json: unknown, token?: string) =>
    app.handle(new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(json) })).then((r) => r.json() as Promise<any>);
  const owner = await post("/api/v1/auth/register", { email: "rt@clinic.test", password: "a long password", name: "R", clinic_name: "R" });
  const key = await post("/api/v1/mcp/keys", { name: "k", scopes: ["clinic_context"], rate_limit_per_day: 100_000 }, owner.access_token);
  for (let i = 0; i < 5; i++) await post("/mcp/tools/get_clinic_context/invoke", {}, key.api_key);
  const before = statements;
  const calls = 200;
  for (let i = 0; i < calls; i++) await post("/mcp/tools/get_clinic_context/invoke", {}, key.api_key);
  const perCall = (statements - before) / calls;
  await context.lifecycle.beforeClose();
  await database.destroy();
  return perCall;
}

if (import.meta.main) {
  const rows: Record<string, string | number>[] = [];
  const service = await startBenchService();
  const invokeUrl = `${service.server.baseUrl}/mcp/tools/get_clinic_context/invoke`;
  const headers = { authorization: `Bearer ${service.apiKey}`, "content-type": "application/json" };
  const sample = await fetch(invokeUrl, { method: "POST", headers, body: "{}" }).then((r) => r.text());
  const bare = await startBareServer(sample);

  const baseline = await loadFromChild({ url: bare.url, method: "POST", headers, body: "{}", connections: CONNECTIONS, seconds: SECONDS });
  const invoke = await loadFromChild({ url: invokeUrl, method: "POST", headers, body: "{}", connections: CONNECTIONS, seconds: SECONDS });
  bare.stop();
  await service.cleanup();
  const trips = await roundTripsPerCall();
  rows.push({ target: "bare Bun.serve (same JSON)", rps: baseline.rps, p50_ms: baseline.p50_ms, p99_ms: baseline.p99_ms, errors: baseline.errors });
  rows.push({ target: "POST /mcp/tools/get_clinic_context/invoke", rps: invoke.rps, p50_ms: invoke.p50_ms, p99_ms: invoke.p99_ms, errors: invoke.errors });
  printTable(`MCP invoke vs bare Bun.serve — ${databaseLabel()}, ${CONNECTIONS} connections, ${SECONDS} s`, rows);
  console.log(`\nratio: ${((invoke.rps / baseline.rps) * 100).toFixed(1)} % of the bare server's throughput (target ≥ 50 %)`);
  console.log(`database statements per warm call: ${trips} (target 0)`);
}

async function startBareServer(body: string) {
  const child = Bun.spawn(["bun", `${import.meta.dir}/lib/bare-server.ts`, body], { stdout: "pipe" });
  const reader = child.stdout.getReader();
  const { value } = await reader.read();
  const url = JSON.parse(new TextDecoder().decode(value).trim().split("\n")[0]!).base_url as string;
  return { url, stop: () => child.kill("SIGTERM") };
}
