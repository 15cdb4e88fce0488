/**
 * `query_database` over `POST /mcp` beside the MCP database servers people use on PostgreSQL:
 * `@bytebase/dbhub` (HTTP) and `@modelcontextprotocol/server-postgres` (stdio), both run from
 * devDependencies with Node, on the same database holding the demo clinic, through the same
 * official SDK client (one client per system). Four query classes, each asked the same logical
 * question (ours through the clinic views, the peers on the base tables filtered by clinic);
 * rounds interleave the systems; medians of the rounds. Beside them, a floor: this service's own
 * guard and executor behind a bare Bun.serve (bench/lib/bare-mcp-database.ts), which shows what
 * the safe read path costs on its own and what the rest of a call (framework, key, quota, usage
 * log) adds. Needs DATABASE_URL=postgres://….
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { join } from "node:path";
import { createTestDatabase, POSTGRES_URL } from "../tests/helpers/database";
import { startServer } from "../tests/helpers/server-process";
import { cpuMicros, median, percentile, postgresCpuMicros } from "./lib/load";
import { QUERIES, type QueryClass } from "./lib/query-classes";
import { seedUnlimitedDemo, startScript } from "./lib/service";
import { printTable, reportTarget } from "./lib/table";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CALLERS = 8;
const LATENCY_CALLS = 200;
const ROOT = join(import.meta.dir, "..");

if (!POSTGRES_URL) {
  console.log("\n### MCP database peers\n\nskipped: the peers serve PostgreSQL; run with DATABASE_URL=postgres://…");
  process.exit(0);
}

interface System {
  name: string;
  client: Client;
  tool: string;
  args(query: QueryClass): Record<string, unknown>;
  /** The rows a result carries, to check that every system answers the same. */
  rowCount(result: unknown): number;
  /** The server's process, whose CPU time is measured. */
  pid: number;
  /** A floor measured beside the peers (not a peer: never the best peer). */
  floor?: boolean;
  stop(): Promise<void>;
}

const textOf = (result: unknown) => ((result as { content: { text: string }[] }).content[0]?.text ?? "");
/** The rows of a `query_database` result (ours and the floor's): its structured content. */
const structuredRowCount = (result: unknown) => (result as { structuredContent: { rows: unknown[] } }).structuredContent.rows.length;
const ensureOk = (system: string, result: unknown) => {
  if ((result as { isError?: boolean }).isError) throw new Error(`${system} failed: ${textOf(result).slice(0, 500)}`);
  return result;
};

async function connect(name: string, transport: Parameters<Client["connect"]>[0]): Promise<Client> {
  const client = new Client({ name: `bench-${name}`, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const database = await createTestDatabase();
console.error("mcp-peers: seeding the demo clinic on PostgreSQL…");
const demo = await seedUnlimitedDemo(database);
const dbUrl = database.url!;

const ours = await startServer({ DATABASE_URL: dbUrl, LOG_LEVEL: "warn" });
const dbhubPort = 20_000 + Math.floor(Math.random() * 20_000);
const dbhub = Bun.spawn(["node", join(ROOT, "node_modules/@bytebase/dbhub/dist/index.js"), "--transport", "http", "--port", String(dbhubPort), "--dsn", `${dbUrl}?sslmode=disable`], { stdout: "ignore", stderr: "ignore" });
for (let attempt = 0; !(await fetch(`http://127.0.0.1:${dbhubPort}/healthz`).then((r) => r.ok, () => false)); attempt++) {
  if (attempt > 200) throw new Error("dbhub did not start");
  await Bun.sleep(50);
}

// The floor with the database: this service's guard and executor behind a bare Bun.serve.
const bareDatabase = await startScript("bare-mcp-database.ts", JSON.stringify({ databaseUrl: dbUrl, clinicId: demo.clinic_id }));
const serverPostgres = new StdioClientTransport({ command: "node", args: [join(ROOT, "node_modules/@modelcontextprotocol/server-postgres/dist/index.js"), dbUrl], stderr: "ignore" });
const systems: System[] = [
  {
    name: "this service (POST /mcp)",
    client: await connect("ours", new StreamableHTTPClientTransport(new URL(`${ours.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${demo.mcp_key}` } } })),
    tool: "query_database",
    args: (q) => ({ sql: q.ours }),
    rowCount: structuredRowCount,
    pid: ours.pid,
    stop: () => ours.stop().then(() => {}),
  },
  {
    name: "@bytebase/dbhub 1.4 (HTTP)",
    client: await connect("dbhub", new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${dbhubPort}/mcp`))),
    tool: "execute_sql",
    args: (q) => ({ sql: q.peers(demo.clinic_id) }),
    rowCount: (r) => {
      const parsed = JSON.parse(textOf(r));
      if (!parsed?.data?.statements?.[0]?.rows) throw new Error(`dbhub answered: ${textOf(r).slice(0, 300)}`);
      return parsed.data.statements[0].rows.length as number;
    },
    pid: dbhub.pid,
    stop: async () => {
      dbhub.kill();
      await dbhub.exited;
    },
  },
  {
    name: "floor: bare Bun.serve + our guard and executor",
    client: await connect("floor-database", new StreamableHTTPClientTransport(new URL(`${bareDatabase.url}/mcp`))),
    tool: "query_database",
    args: (q) => ({ sql: q.ours }),
    rowCount: structuredRowCount,
    pid: bareDatabase.pid,
    floor: true,
    stop: async () => bareDatabase.stop(),
  },
  {
    name: "server-postgres 0.6.2 (stdio)",
    client: await connect("server-postgres", serverPostgres),
    tool: "query",
    args: (q) => ({ sql: q.peers(demo.clinic_id) }),
    rowCount: (r) => (JSON.parse(textOf(r)) as unknown[]).length,
    pid: serverPostgres.pid!,
    stop: async () => {},
  },
];

let finished = false;
process.on("exit", () => {
  // A failed run must not leave the servers behind.
  if (finished) return;
  dbhub.kill();
  void bareDatabase.stop();
  process.kill(ours.pid);
});

const call = async (system: System, query: QueryClass) => ensureOk(system.name, await system.client.callTool({ name: system.tool, arguments: system.args(query) }));

// Every system gives the same answer before any is timed.
for (const query of QUERIES) {
  const counts = await Promise.all(systems.map(async (system) => system.rowCount(await call(system, query))));
  if (new Set(counts).size !== 1) throw new Error(`${query.label}: the systems disagree on the row count (${counts.join(", ")})`);
}

interface Sample {
  p50: number;
  throughput: number;
  bytes: number;
  /** CPU time per call during the throughput phase, µs: the server's process, this process (the SDK client), and PostgreSQL's processes. */
  cpu: { server: number; client: number; postgres: number };
}

async function measure(system: System, query: QueryClass): Promise<Sample> {
  const latencies: number[] = [];
  let bytes = 0;
  for (let i = 0; i < LATENCY_CALLS; i++) {
    const started = performance.now();
    const result = await call(system, query);
    latencies.push(performance.now() - started);
    if (i === 0) bytes = JSON.stringify(result).length;
  }
  latencies.sort((a, b) => a - b);
  let calls = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const began = performance.now();
  const before = { server: cpuMicros(system.pid), client: process.cpuUsage(), postgres: postgresCpuMicros() };
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < deadline) {
        await call(system, query);
        calls++;
      }
    }),
  );
  const client = process.cpuUsage(before.client);
  const cpu = { server: (cpuMicros(system.pid) - before.server) / calls, client: (client.user + client.system) / calls, postgres: (postgresCpuMicros() - before.postgres) / calls };
  return { p50: percentile(latencies, 50), throughput: calls / ((performance.now() - began) / 1000), bytes, cpu };
}

const samples = new Map<string, Sample[]>();
for (let round = 1; round <= ROUNDS; round++) {
  console.error(`mcp-peers: round ${round} of ${ROUNDS}…`);
  for (const query of QUERIES) {
    for (const system of round % 2 ? systems : [...systems].reverse()) {
      const key = `${query.label}\u0000${system.name}`;
      samples.set(key, [...(samples.get(key) ?? []), await measure(system, query)]);
    }
  }
}
// The transport's floor: the same SDK client against a bare Bun.serve replaying this service's
// own count(*) answer, doing no work, so the table shows how much of a call HTTP itself takes.
const recorded = JSON.stringify(await call(systems[0]!, QUERIES[0]!));
const replayer = await startScript("mcp-replayer.ts", recorded);
const replayerSystem: System = { ...systems[0]!, name: "transport floor", pid: replayer.pid, client: await connect("transport-floor", new StreamableHTTPClientTransport(new URL(`${replayer.url}/mcp`))), stop: async () => {} };
const transportFloor = await measure(replayerSystem, QUERIES[0]!);
await replayerSystem.client.close();
await replayer.stop();
for (const system of systems) {
  await system.client.close();
  await system.stop();
}
finished = true;
await database.destroy();

const rows: Record<string, string | number>[] = [];
const ratios: string[] = [];
const floorRatios: string[] = [];
let everyRatioMet = true;
for (const query of QUERIES) {
  const figures = systems.map((system) => {
    const runs = samples.get(`${query.label}\u0000${system.name}`)!;
    return { p50: median(runs.map((r) => r.p50)), throughput: median(runs.map((r) => r.throughput)), bytes: runs[0]!.bytes };
  });
  const cell = (f: (typeof figures)[number]) => `${f.p50.toFixed(2)} ms, ${Math.round(f.throughput).toLocaleString("en-US")}/s, ${(f.bytes / 1024).toFixed(0)} KB`;
  const bestPeer = Math.max(...figures.filter((_, i) => i > 0 && !systems[i]!.floor).map((f) => f.throughput));
  const floorFigure = figures[systems.findIndex((system) => system.floor)]!;
  const ratio = figures[0]!.throughput / bestPeer;
  ratios.push(`${query.label} ${ratio.toFixed(2)}`);
  floorRatios.push(`${query.label} ${(floorFigure.throughput / bestPeer).toFixed(2)}`);
  everyRatioMet &&= ratio >= 1;
  rows.push({
    query: query.label,
    ...Object.fromEntries(systems.map((s, i) => [s.name, cell(figures[i]!)])),
    "ours ÷ best peer (throughput)": ratio.toFixed(2),
    "floor ÷ best peer": (floorFigure.throughput / bestPeer).toFixed(2),
  });
}
printTable(`MCP database peers — PostgreSQL, demo clinic; p50 of ${LATENCY_CALLS} sequential calls, throughput with ${CALLERS} callers for ${SECONDS} s, result size; medians of ${ROUNDS} interleaved rounds`, rows);

/**
 * Where a call's CPU goes. Client, servers and PostgreSQL share the machine's cores, so the
 * throughputs above are set by the sum: what each system's server spends, what the same SDK
 * client spends on its transport (HTTP or stdio), and what PostgreSQL spends on the statements.
 */
const cpuRows: Record<string, string | number>[] = [];
for (const query of QUERIES) {
  for (const system of systems) {
    const runs = samples.get(`${query.label}\u0000${system.name}`)!;
    const cpu = (part: keyof Sample["cpu"]) => median(runs.map((r) => r.cpu[part]));
    const total = cpu("server") + cpu("client") + cpu("postgres");
    cpuRows.push({ query: query.label, system: system.name, server: Math.round(cpu("server")), "SDK client": Math.round(cpu("client")), PostgreSQL: Math.round(cpu("postgres")), total: Math.round(total) });
  }
}
cpuRows.push({ query: "count(*)", system: "floor: bare replayer (HTTP, no database)", server: Math.round(transportFloor.cpu.server), "SDK client": Math.round(transportFloor.cpu.client), PostgreSQL: Math.round(transportFloor.cpu.postgres), total: Math.round(transportFloor.cpu.server + transportFloor.cpu.client + transportFloor.cpu.postgres) });
printTable(`CPU time per call (µs) during the throughput phase, medians of ${ROUNDS} rounds; ${navigator.hardwareConcurrency} cores shared by all three`, cpuRows);
console.log(`\nratios (target ≥ 1.00): ${ratios.join(" · ")}`);
console.log(`the floor with the database (a bare Bun.serve with this service's guard and executor, no framework, key, quota or usage log) ÷ best peer: ${floorRatios.join(" · ")}`);
reportTarget({ target: "query_database over POST /mcp ≥ the best peer's throughput, each query class (PostgreSQL)", measured: ratios.join(" · "), met: everyRatioMet });
console.log(
  `HTTP transport floor (the same SDK client against a bare Bun.serve replaying this service's count(*) answer): p50 ${transportFloor.p50.toFixed(2)} ms, ${Math.round(transportFloor.throughput).toLocaleString("en-US")} calls/s with ${CALLERS} callers`,
);
