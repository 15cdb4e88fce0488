/**
 * Embedded `query_database` over `POST /mcp` (the SDK client, one connection) against PGlite
 * called directly in a process, on the same demo clinic data directory: the four query classes
 * of the peer benchmark, the service through its clinic views, PGlite on the base tables
 * filtered by clinic. Throughput with 8 callers, and the CPU time per call of each side (this
 * process for PGlite direct, the server process from /proc for `POST /mcp`); medians of
 * BENCH_ROUNDS rounds. Two floors: the guard and executor in this process, and the same behind a
 * bare Bun.serve (bench/lib/bare-mcp-database.ts) through the same client.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { rmSync } from "node:fs";
import { loadConfig } from "../src/config";
import { openDatabase, type Database } from "../src/db/client";
import { SqlEngine } from "../src/modules/mcp/sql-guard/engine";
import { startServer } from "../tests/helpers/server-process";
import { demoDataDir, startScript } from "./lib/service";
import { QUERIES } from "./lib/query-classes";
import { cpuMicros, median } from "./lib/load";
import { printTable, reportTarget } from "./lib/table";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLERS = 8;
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 2);

if (process.env.DATABASE_URL?.startsWith("postgres")) {
  console.log("\n### Embedded query_database vs PGlite\n\nskipped: this compares with PGlite; run without DATABASE_URL");
  process.exit(0);
}

/**
 * Calls a second with CALLERS concurrent callers, and the CPU time per call of `pid` (this
 * process by default), after a warm-up of the same work: a server just started runs
 * PostgreSQL's WebAssembly in its baseline tier until the engine has optimized the hot code.
 */
async function throughput(work: () => Promise<unknown>, pid = process.pid): Promise<{ rate: number; cpuMicros: number }> {
  for (const warmUpEnds = performance.now() + WARM_UP_SECONDS * 1000; performance.now() < warmUpEnds; ) await work();
  let calls = 0;
  const cpuBefore = cpuMicros(pid);
  const began = performance.now();
  const deadline = began + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < deadline) {
        await work();
        calls++;
      }
    }),
  );
  return { rate: calls / ((performance.now() - began) / 1000), cpuMicros: (cpuMicros(pid) - cpuBefore) / calls };
}

const { dataDir, demo } = await demoDataDir("embedded");

/** One side at a time: the data directory has one owner process. */
const samples = new Map<string, number[]>();
const note = (key: string, value: { rate: number; cpuMicros: number }) => {
  samples.set(key, [...(samples.get(key) ?? []), value.rate]);
  samples.set(`${key} cpu`, [...(samples.get(`${key} cpu`) ?? []), value.cpuMicros]);
};

/** The four query classes through the SDK client against the MCP server at `url` (process `pid`), noted under `side`. */
async function measureOverMcp(side: string, url: string, pid: number, headers: Record<string, string> = {}): Promise<void> {
  const client = new Client({ name: `bench-embedded-${side.replaceAll(" ", "-")}`, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  for (const query of QUERIES) {
    note(
      `${side} ${query.label}`,
      await throughput(async () => {
        const result = await client.callTool({ name: "query_database", arguments: { sql: query.ours } });
        if (result.isError) throw new Error(JSON.stringify(result.content).slice(0, 300));
      }, pid),
    );
  }
  await client.close();
}
for (let round = 1; round <= ROUNDS; round++) {
  console.error(`mcp-embedded: round ${round} of ${ROUNDS}…`);
  const direct: Database = await openDatabase({ dataDir });
  for (const query of QUERIES) note(`direct ${query.label}`, await throughput(() => direct.query(query.peers(demo.clinic_id))));
  // The floor of the service's own statements: the guard (its verdict cache) and the executor in
  // this process, as query_database runs them (read-only transaction, the clinic and reader role
  // settings, the clinic views), with no HTTP, MCP, key, quota or usage log.
  const engine = new SqlEngine(direct, loadConfig({ DATA_DIR: dataDir }));
  for (const query of QUERIES) {
    note(
      `executor ${query.label}`,
      await throughput(() => {
        const guarded = engine.guard(query.ours);
        if (!guarded.ok) throw new Error(guarded.message);
        return engine.run(demo.clinic_id, guarded);
      }),
    );
  }
  await direct.close();

  const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn" });
  await measureOverMcp("mcp", `${server.baseUrl}/mcp`, server.pid, { authorization: `Bearer ${demo.mcp_key}` });
  await server.stop();

  // The floor served: the same guard and executor behind a bare Bun.serve on this data directory,
  // through the same SDK client; what serving over HTTP on PostgreSQL's own thread leaves.
  const floor = await startScript("bare-mcp-database.ts", JSON.stringify({ dataDir, clinicId: demo.clinic_id }));
  await measureOverMcp("served floor", `${floor.url}/mcp`, floor.pid);
  await floor.stop();
}
rmSync(dataDir, { recursive: true, force: true });

const ratioOf = (label: string) => median(samples.get(`mcp ${label}`)!) / median(samples.get(`direct ${label}`)!);
printTable(
  `Embedded query_database over POST /mcp vs PGlite in process — demo clinic, ${CALLERS} callers, ${SECONDS} s, medians of ${ROUNDS} rounds`,
  QUERIES.map((query) => {
    const mcp = median(samples.get(`mcp ${query.label}`)!);
    const direct = median(samples.get(`direct ${query.label}`)!);
    const cpu = (key: string) => median(samples.get(`${key} cpu`)!).toFixed(0);
    const executor = median(samples.get(`executor ${query.label}`)!);
    const servedFloor = median(samples.get(`served floor ${query.label}`)!);
    return {
      query: query.label,
      "PGlite direct (queries/s)": Math.round(direct),
      "POST /mcp (calls/s)": Math.round(mcp),
      ratio: `${Math.round(ratioOf(query.label) * 100)} %`,
      target: "≥ 50 %",
      "floor: guard + executor in process (queries/s, of direct)": `${Math.round(executor)}, ${Math.round((executor / direct) * 100)} %`,
      "floor served: the same behind a bare Bun.serve (calls/s, of direct)": `${Math.round(servedFloor)}, ${Math.round((servedFloor / direct) * 100)} %`,
      "CPU µs per query, executor": cpu(`executor ${query.label}`),
      "CPU µs per query, direct": cpu(`direct ${query.label}`),
      "server CPU µs per call": cpu(`mcp ${query.label}`),
      "floor served: server CPU µs per call": cpu(`served floor ${query.label}`),
    };
  }),
);
reportTarget({
  target: "embedded query_database ≥ 50 % of PGlite called directly, each query class",
  measured: QUERIES.map((query) => `${query.label} ${Math.round(ratioOf(query.label) * 100)} %`).join(" · "),
  met: QUERIES.every((query) => ratioOf(query.label) >= 0.5),
});
