/**
 * The single binary: size, cold start on an existing data directory (until /ready answers),
 * and resident memory under MCP load, beside a bare Bun.serve started the same way.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startServer } from "../tests/helpers/server-process";
import { loadFromChild, median } from "./lib/load";
import { databaseLabel, printTable, reportTarget } from "./lib/table";

const ROOT = join(import.meta.dir, "..");
const binary = join(ROOT, "dist", "vet-clinic");
// Always rebuilt, so the figures are those of the current source.
const build = Bun.spawnSync(["bun", "run", "build"], { cwd: ROOT, stdout: "ignore", stderr: "inherit" });
if (build.exitCode !== 0) throw new Error("build failed");
const workDir = mkdtempSync(join(tmpdir(), "vet-clinic-bench-bin-"));
const env: Record<string, string> = process.env.DATABASE_URL?.startsWith("postgres") ? { DATABASE_URL: process.env.DATABASE_URL } : {};

/** Milliseconds until `readyPath` answers, and the start-up phases the server reported. */
async function timeToReady(command: string[], readyPath: string): Promise<{ ms: number; phases: Record<string, number> }> {
  const started = performance.now();
  const server = await startServer({ ...env, LOG_LEVEL: "warn" }, { command, cwd: workDir });
  for (;;) {
    const ok = await fetch(`${server.baseUrl}${readyPath}`).then((r) => r.ok, () => false);
    if (ok) break;
  }
  const ms = performance.now() - started;
  const listening = await server.waitForLog((line) => line.msg === "listening");
  await server.stop();
  return { ms, phases: (listening.startup_ms ?? {}) as Record<string, number> };
}

/** PostgreSQL's WebAssembly compiled alone, in this process: the part of opening no code of ours can skip. */
async function compileMs(): Promise<number> {
  const bytes = await Bun.file(join(ROOT, "node_modules/@electric-sql/pglite/dist/pglite.wasm")).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await WebAssembly.compile(bytes);
    times.push(performance.now() - started);
  }
  return median(times);
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

// First start creates (or migrates) the data; the timed ones start on an existing directory.
await timeToReady([binary], "/ready");
const starts: Awaited<ReturnType<typeof timeToReady>>[] = [];
for (let i = 0; i < 5; i++) starts.push(await timeToReady([binary], "/ready"));
const bareStart = (await timeToReady(["bun", join(import.meta.dir, "lib/bare-server.ts")], "/")).ms;
const phase = (name: string) => Math.round(median(starts.map((start) => start.phases[name] ?? 0)));
const compile = env.DATABASE_URL ? undefined : await compileMs();

const server = await startServer({ ...env, LOG_LEVEL: "warn" }, { command: [binary], cwd: workDir });
const pid = server.pid;
const owner = await call(server.baseUrl, "POST", "/api/v1/auth/register", { json: { email: `rss${Date.now()}@clinic.test`, password: "a long password", name: "R", clinic_name: "R" } });
const key = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", { token: owner.body.access_token, json: { name: "k", scopes: ["clinic_context"], rate_limit_per_day: 1_000_000 } });
const idle = rssMb(pid);
const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 200);
let peak = idle;
// The burst cap (60/min) refuses most calls quickly: this measures memory, not throughput.
await loadFromChild({ url: `${server.baseUrl}/mcp/tools/get_clinic_context/invoke`, method: "POST", headers: { authorization: `Bearer ${key.body.api_key}`, "content-type": "application/json" }, body: "{}", connections: 64, seconds: 5 });
clearInterval(sampler);
await server.stop();
rmSync(workDir, { recursive: true, force: true });

printTable(`Single binary — ${databaseLabel()}`, [
  { measure: "binary size", value: `${Math.round(statSync(binary).size / 1024 / 1024)} MB` },
  { measure: "cold start to /ready on existing data (median of 5)", value: `${Math.round(median(starts.map((start) => start.ms)))} ms` },
  {
    measure: "… of which, as the server reports (medians)",
    value: `process ${phase("process")} ms, database ${phase("database")} ms, migrations ${phase("migrations")} ms, app ${phase("app")} ms, listen ${phase("listen")} ms`,
  },
  ...(compile === undefined ? [] : [{ measure: "… compiling pglite.wasm alone, in process (median of 5)", value: `${Math.round(compile)} ms` }]),
  { measure: "baseline: bare Bun.serve script to first answer", value: `${Math.round(bareStart)} ms` },
  { measure: "resident memory idle", value: `${idle} MB` },
  { measure: "resident memory peak under 64-connection load", value: `${peak} MB` },
]);
const coldStart = Math.round(median(starts.map((start) => start.ms)));
if (databaseLabel() === "embedded PGlite") reportTarget({ target: "cold start of the binary to /ready, existing data, ≤ 300 ms (median of 5)", measured: `${coldStart} ms`, met: coldStart <= 300 });
