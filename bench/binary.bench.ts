/**
 * The single binary: size, cold start on an existing data directory (until /ready answers),
 * and resident memory under MCP load, beside a bare Bun.serve started the same way.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startServer } from "../tests/helpers/server-process";
import { loadFromChild } from "./lib/load";
import { databaseLabel, printTable } from "./lib/table";

const ROOT = join(import.meta.dir, "..");
const binary = join(ROOT, "dist", "vet-clinic");
// Always rebuilt, so the figures are those of the current source.
const build = Bun.spawnSync(["bun", "run", "build"], { cwd: ROOT, stdout: "ignore", stderr: "inherit" });
if (build.exitCode !== 0) throw new Error("build failed");
const workDir = mkdtempSync(join(tmpdir(), "vet-clinic-bench-bin-"));
const env: Record<string, string> = process.env.DATABASE_URL?.startsWith("postgres") ? { DATABASE_URL: process.env.DATABASE_URL } : {};

async function timeToReady(command: string[], readyPath: string): Promise<number> {
  const started = performance.now();
  const server = await startServer({ ...env, LOG_LEVEL: "warn" }, { command, cwd: workDir });
  for (;;) {
    const ok = await fetch(`${server.baseUrl}${readyPath}`).then((r) => r.ok, () => false);
    if (ok) break;
  }
  const elapsed = performance.now() - started;
  await server.stop();
  return elapsed;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

// First start creates (or migrates) the data; the timed ones start on an existing directory.
await timeToReady([binary], "/ready");
const starts = [] as number[];
for (let i = 0; i < 3; i++) starts.push(await timeToReady([binary], "/ready"));
const bareStart = await timeToReady(["bun", join(import.meta.dir, "lib/bare-server.ts")], "/");

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
  { measure: "cold start to /ready on existing data (median of 3)", value: `${Math.round(starts.sort((a, b) => a - b)[1]!)} ms` },
  { measure: "baseline: bare Bun.serve script to first answer", value: `${Math.round(bareStart)} ms` },
  { measure: "resident memory idle", value: `${idle} MB` },
  { measure: "resident memory peak under 64-connection load", value: `${peak} MB` },
]);
