import { PGlite } from "@electric-sql/pglite";
import { silentLogger } from "../src/lib/logger";
import { createTestApp } from "../tests/helpers/app";
import { registerClinic } from "../tests/helpers/clinic";
import { createKey, invoke } from "../tests/mcp/helpers";
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
  const t = await createTestApp({ config: { quotaFlushMs: 3_600_000 }, logger: silentLogger });
  const key = await createKey(await registerClinic(t), { scopes: ["clinic_context"], rate_limit_per_day: 100_000 });
  for (let i = 0; i < 5; i++) await invoke(t, key.api_key, "get_clinic_context");
  const before = statements;
  const calls = 200;
  for (let i = 0; i < calls; i++) await invoke(t, key.api_key, "get_clinic_context");
  const perCall = (statements - before) / calls;
  await t.close();
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
