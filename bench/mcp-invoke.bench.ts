import { PGlite } from "@electric-sql/pglite";
import { silentLogger } from "../src/lib/logger";
import { createTestApp } from "../tests/helpers/app";
import { registerClinic } from "../tests/helpers/clinic";
import { createKey, invoke } from "../tests/mcp/helpers";
import { startServer } from "../tests/helpers/server-process";
import { cpuMicros, loadFromChild } from "./lib/load";
import { startBenchService, startScript } from "./lib/service";
import { databaseLabel, printTable, reportTarget } from "./lib/table";

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
  /**
   * The load generator needs a core of its own, so on a small machine it, not the server, can
   * be what limits a fast server's throughput: each row also gives the server's own CPU time
   * per request (from /proc), measured after a warm-up.
   */
  const load = async (pid: number, url: string, method = "POST", seconds = SECONDS) => {
    const options = { url, method, headers, body: method === "POST" ? "{}" : undefined, connections: CONNECTIONS };
    await loadFromChild({ ...options, seconds: 1, warmupSeconds: 0 });
    const before = cpuMicros(pid);
    const result = await loadFromChild({ ...options, seconds, warmupSeconds: 0 });
    return { ...result, cpu_us: (cpuMicros(pid) - before) / result.requests };
  };

  const bare = await startScript("bare-server.ts", sample);
  const baseline = await load(bare.pid, bare.url);
  await bare.stop();
  // Where the rest goes: the framework alone, then this app's cheapest route (its plugins:
  // request id and log line, CORS, error envelope, input rules), then the tool call itself.
  const elysia = await startScript("bare-elysia.ts", sample);
  const framework = await load(elysia.pid, `${elysia.url}/mcp/tools/get_clinic_context/invoke`);
  await elysia.stop();
  const health = await load(service.server.pid, `${service.server.baseUrl}/health`, "GET");
  const invoke = await load(service.server.pid, invokeUrl);
  // The usage log's share of a call: the same server, its usage rows (and quota counts) written
  // once an hour instead of every few seconds. Rows still queue; only the database's insert is left out.
  await service.server.stop();
  // Measured for 2 s, so that the queue stays under its bound (USAGE_QUEUE_LIMIT) at this load: past
  // it, rows would be dropped instead of queued, and the row would flatter the server.
  const unflushed = await startServer({ ...service.env, QUOTA_FLUSH_MS: "3600000" });
  const unflushedSeconds = Math.min(SECONDS, 2);
  const withoutUsageWrites = await load(unflushed.pid, `${unflushed.baseUrl}/mcp/tools/get_clinic_context/invoke`, "POST", unflushedSeconds);
  const queue = ((await fetch(`${unflushed.baseUrl}/ready`).then((r) => r.json())) as { usage_log: { pending: number; dropped: number } }).usage_log;
  await unflushed.stop();
  await service.cleanup();
  const trips = await roundTripsPerCall();
  const share = (rps: number) => `${((rps / baseline.rps) * 100).toFixed(1)} %`;
  const row = (target: string, result: typeof baseline) => ({
    target,
    rps: result.rps,
    "of bare": share(result.rps),
    "server CPU per request (µs)": result.cpu_us.toFixed(1),
    p50_ms: result.p50_ms,
    p99_ms: result.p99_ms,
    errors: result.errors,
  });
  rows.push(row("bare Bun.serve (same JSON)", baseline));
  rows.push(row("bare Elysia, one route like /invoke, no plugins (same JSON)", framework));
  rows.push(row("this app: GET /health (every plugin, no database, no key)", health));
  rows.push(row("POST /mcp/tools/get_clinic_context/invoke", invoke));
  rows.push(
    row(
      `the same, usage rows queued but not written (what the usage log's insert costs; ${unflushedSeconds} s, ${queue.pending} rows queued${queue.dropped ? `, ${queue.dropped} dropped past the bound` : ", none dropped"})`,
      withoutUsageWrites,
    ),
  );
  printTable(`MCP invoke vs bare Bun.serve — ${databaseLabel()}, ${CONNECTIONS} connections, ${SECONDS} s`, rows);
  console.log(`\nratio: ${((invoke.rps / baseline.rps) * 100).toFixed(1)} % of the bare server's throughput (target ≥ 50 %)`);
  reportTarget({ target: `/invoke get_clinic_context ≥ 50 % of a bare Bun.serve (${databaseLabel()})`, measured: share(invoke.rps), met: invoke.rps / baseline.rps >= 0.5 });
  console.log(`database statements per warm call: ${trips} (target 0)`);
}
