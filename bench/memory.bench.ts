/**
 * Resident memory of the embedded server (the single binary's case) with the demo clinic: idle
 * after start, the peak under `get_clinic_context` and `query_database` load (the four query
 * classes of the peer benchmark, 8 connections), and how it moves over a soak of
 * BENCH_SOAK_SECONDS (default 60; the README's figure is a 10-minute run). A server that leaks
 * shows up as a rising last column. The soak runs twice: with the defaults, and with the
 * settings the README gives a box that must stay under 300 MB (a lower MEMORY_SOFT_LIMIT_MB, and
 * Bun's allocator returning freed memory at once), whose price is the calls it answers fewer. BENCH_MEMORY_DEMO=large soaks the demo clinic with
 * about a million visits instead.
 */
import { readFileSync, rmSync } from "node:fs";
import { startServer } from "../tests/helpers/server-process";
import { demoDataDir } from "./lib/service";
import { loadFromChild } from "./lib/load";
import { printTable, reportTarget } from "./lib/table";

const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
const STEP_SECONDS = 10;

if (process.env.DATABASE_URL?.startsWith("postgres")) {
  console.log("\n### Embedded memory\n\nskipped: this measures the embedded database's process; run without DATABASE_URL");
  process.exit(0);
}

const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024);

/** `BENCH_MEMORY_DEMO=large`: the demo clinic with about a million visits (seeding adds a minute or two). */
const DEMO_SIZE = process.env.BENCH_MEMORY_DEMO === "large" ? "large" : "small";
const AT_SCALE = DEMO_SIZE === "large" ? " (about a million visits)" : "";
const { dataDir, demo } = await demoDataDir("memory", DEMO_SIZE);
const floor = JSON.parse(Bun.spawnSync(["bun", "--smol", `${import.meta.dir}/lib/memory-floor.ts`, dataDir]).stdout.toString().trim()) as { bun: number; compiled: number; opened: number };

/** A soak under the given extra environment: resident memory idle, at peak, over time and at the end. */
async function soak(extraEnv: Record<string, string>) {
  // With --smol, as the binary runs (package.json "build").
  const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn", ...extraEnv }, { command: ["bun", "--smol", "src/index.ts"] });
  const headers = { authorization: `Bearer ${demo.mcp_key}`, "content-type": "application/json" };
  const workloads = [
    { url: `${server.baseUrl}/mcp/tools/get_clinic_context/invoke`, body: "{}" },
    ...[
      "SELECT count(*) AS n FROM visits",
      "SELECT date_trunc('month', paid_at) AS month, sum(amount) AS revenue FROM payments GROUP BY 1 ORDER BY 1",
      "SELECT t.name, count(v.id) AS visits FROM tutors t JOIN patients p ON p.tutor_id = t.id JOIN visits v ON v.patient_id = p.id GROUP BY t.id, t.name ORDER BY visits DESC, t.name LIMIT 10",
      "SELECT id, patient_id, status, scheduled_at, reason FROM visits ORDER BY scheduled_at DESC LIMIT 200",
    ].map((sql) => ({ url: `${server.baseUrl}/mcp/tools/query_database/invoke`, body: JSON.stringify({ sql }) })),
  ];
  // Settled: the first statistics pass and the key listener have run.
  await fetch(`${server.baseUrl}/ready`);
  const idle = rssMb(server.pid);
  let peak = idle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 200);
  const timeline: Record<string, string | number>[] = [];
  const started = performance.now();
  let calls = 0;
  for (let step = 0; (performance.now() - started) / 1000 < SOAK_SECONDS; step++) {
    const workload = workloads[step % workloads.length]!;
    const result = await loadFromChild({ url: workload.url, method: "POST", headers, body: workload.body, connections: 8, seconds: STEP_SECONDS, warmupSeconds: 0 });
    calls += result.requests;
    if (result.errors) throw new Error(`${result.errors} failed calls: the soak measures a working server`);
    timeline.push({ "after (s)": Math.round((performance.now() - started) / 1000), calls, "resident (MB)": rssMb(server.pid), "peak so far (MB)": peak });
  }
  clearInterval(sampler);
  const afterLoad = rssMb(server.pid);
  await server.stop();
  return { idle, peak, afterLoad, calls, timeline };
}

/** Resident memory of an untouched server 10 s after start (what an idle install holds). */
async function idleAfterStart(): Promise<number> {
  const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn" }, { command: ["bun", "--smol", "src/index.ts"] });
  await Bun.sleep(10_000);
  const resident = rssMb(server.pid);
  await server.stop();
  return resident;
}

/**
 * What each module loaded on first use adds: each measured alone in a fresh `bun --smol` that
 * has the database client loaded (so dependencies they share count in each figure).
 */
const LAZY_MODULES = ["@modelcontextprotocol/sdk/server/index.js", "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js", "sql-parser-cst", "node-forge", "xml-crypto", "pdf-lib", "bwip-js"];
const moduleShare = (spec: string) => JSON.parse(Bun.spawnSync(["bun", "--smol", `${import.meta.dir}/lib/memory-floor.ts`, "--import", spec]).stdout.toString().trim()) as { mb: number };
const shares = LAZY_MODULES.map((spec) => ({ module: spec, "resident when loaded (MB)": moduleShare(spec).mb }));
const app = moduleShare(`${import.meta.dir}/../src/app.ts`).mb;
const idleAfter10s = await idleAfterStart();

/** The settings for a box that must stay under 300 MB (README, "Configuration"). */
const SMALL_BOX_ENV = { MEMORY_SOFT_LIMIT_MB: "260", MIMALLOC_PURGE_DELAY: "0" };
const SMALL_BOX = Object.entries(SMALL_BOX_ENV)
  .map(([name, value]) => `${name}=${value}`)
  .join(" ");
const byDefault = await soak({});
const lowLimit = await soak(SMALL_BOX_ENV);
rmSync(dataDir, { recursive: true, force: true });
const { idle, peak, afterLoad, timeline } = byDefault;
const fewerCalls = `${Math.round((1 - lowLimit.calls / byDefault.calls) * 100)} %`;

printTable(`Embedded memory — demo clinic${AT_SCALE}, get_clinic_context and the four query_database classes in turn, 8 connections, ${SOAK_SECONDS} s`, [
  { measure: "resident 10 s after start, untouched", value: `${idleAfter10s} MB`, target: "≤ 195 MB" },
  { measure: "resident idle after start", value: `${idle} MB`, target: "≤ 150 MB" },
  { measure: "peak under load", value: `${peak} MB`, target: "≤ 300 MB" },
  { measure: "resident at the end of the soak", value: `${afterLoad} MB`, target: "no growth without bound" },
  { measure: "calls answered in the soak", value: byDefault.calls.toLocaleString("en"), target: "" },
  { measure: `with ${SMALL_BOX}: idle, peak, end`, value: `${lowLimit.idle}, ${lowLimit.peak}, ${lowLimit.afterLoad} MB`, target: "≤ 300 MB at peak" },
  { measure: `with ${SMALL_BOX}: calls answered`, value: `${lowLimit.calls.toLocaleString("en")} (${fewerCalls} fewer)`, target: "" },
  { measure: "floor: Bun with the database client loaded", value: `${floor.bun} MB`, target: "" },
  { measure: "floor: + PostgreSQL's WebAssembly compiled", value: `${floor.compiled} MB`, target: "" },
  { measure: "floor: + PGlite opened on the data directory (before the service's code)", value: `${floor.opened} MB`, target: "the idle target's reach" },
]);
printTable("Loaded on first use, not at start (each alone in a fresh bun --smol with the database client loaded)", [...shares, { module: "src/app.ts as an idle server imports it", "resident when loaded (MB)": app }]);
const sampled = timeline.filter((_, i) => timeline.length <= 12 || i % Math.ceil(timeline.length / 12) === 0 || i === timeline.length - 1);
printTable("Resident memory over the soak", sampled);
reportTarget({ target: `embedded resident memory ≤ 195 MB 10 s after start${AT_SCALE}`, measured: `${idleAfter10s} MB`, met: idleAfter10s <= 195 });
reportTarget({ target: `embedded resident memory ≤ 150 MB idle${AT_SCALE}`, measured: `${idle} MB (floor before the service's code: ${floor.opened} MB)`, met: idle <= 150 });
reportTarget({
  target: `embedded resident memory ≤ 300 MB at peak, no growth without bound${AT_SCALE}`,
  measured: `${peak} MB peak, ${afterLoad} MB after ${SOAK_SECONDS} s (${SMALL_BOX}: ${lowLimit.peak} MB peak for ${fewerCalls} fewer calls)`,
  met: peak <= 300,
});
