/**
 * `query_database` through a transaction-mode PgBouncer against the
 * same server directly, from one run: `DATABASE_URL=postgres://… bun bench/pooled.bench.ts`.
 * Needs PostgreSQL and Debian's pgbouncer (skipped, with a line saying so, otherwise).
 *
 * Three ways of running one service process on one seeded database:
 * - direct: DATABASE_URL is the server itself; the service proves it a session at start and
 *   keeps its statements prepared (named);
 * - direct, unnamed statements: the same server given as both URLs, which the service treats as
 *   a pooler: the cost of unnamed statements alone;
 * - through PgBouncer: DATABASE_URL is PgBouncer (transaction mode, a server pool of 20, larger
 *   than the instance's 14 connections: the pooler's hop, not its queue), DATABASE_DIRECT_URL
 *   the server.
 */
import { join } from "node:path";
import { seedUnlimitedDemo } from "./lib/service";
import { loadFromChild } from "./lib/load";
import { QUERIES } from "./lib/query-classes";
import { printTable } from "./lib/table";
import { createTestDatabase, POSTGRES_DIRECT_URL, POSTGRES_URL, urlForDatabase } from "../tests/helpers/database";
import { call, startServer } from "../tests/helpers/server-process";

const SCRIPT = join(import.meta.dir, "../scripts/pgbouncer-for-tests.sh");
const CONNECTIONS = 8;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

if (!POSTGRES_URL || POSTGRES_DIRECT_URL || !Bun.which("pgbouncer")) {
  console.log("\n(pooled benchmark skipped: it needs DATABASE_URL=postgres://… to a server directly, and pgbouncer)");
  process.exit(0);
}

const database = await createTestDatabase();
const demo = await seedUnlimitedDemo(database);
const direct = database.url!;
const started = Bun.spawnSync(["bash", SCRIPT, "start"], {
  env: { ...process.env, PGBOUNCER_PORT: "", PGBOUNCER_UPSTREAM_HOST: new URL(direct).hostname, PGBOUNCER_UPSTREAM_PORT: new URL(direct).port || "5432", PGBOUNCER_POOL_SIZE: "20" },
});
if (started.exitCode !== 0) throw new Error(`pgbouncer did not start: ${started.stderr.toString()}`);
const out = started.stdout.toString();
const poolerDir = /PGBOUNCER_DIR=(\S+)/.exec(out)![1]!;
const pooled = urlForDatabase(`postgres://postgres@127.0.0.1:${/PGBOUNCER_PORT=(\d+)/.exec(out)![1]}/`, new URL(direct).pathname.slice(1));

const setups: { label: string; env: Record<string, string> }[] = [
  { label: "direct", env: { DATABASE_URL: direct } },
  { label: "direct, unnamed statements", env: { DATABASE_URL: direct, DATABASE_DIRECT_URL: direct } },
  { label: "through PgBouncer (transaction mode)", env: { DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct } },
];
const workloads = [
  ...QUERIES.filter((q) => q.label === "count(*)" || q.label === "200-row listing").map((q) => ({
    label: `query_database: ${q.label}`,
    path: "/mcp/tools/query_database/invoke",
    body: JSON.stringify({ sql: q.ours }),
    auth: `Bearer ${demo.mcp_key}`,
  })),
];

const rows: Record<string, string | number>[] = [];
try {
  for (const setup of setups) {
    const server = await startServer({ ...setup.env, LOG_LEVEL: "warn", QUOTA_FLUSH_MS: "2000" });
    try {
      const ready = await call(server.baseUrl, "GET", "/ready");
      const runs = workloads.map((w) => ({ label: w.label, options: { url: `${server.baseUrl}${w.path}`, method: "POST", headers: { authorization: w.auth, "content-type": "application/json" }, body: w.body } }));
      for (const run of runs) {
        const result = await loadFromChild({ ...run.options, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: 1 });
        rows.push({ workload: run.label, connection: setup.label, statements: ready.body.statements, "calls/s": result.rps, "p50 ms": result.p50_ms, "p99 ms": result.p99_ms, errors: result.errors });
      }
    } finally {
      await server.stop();
    }
  }
} finally {
  Bun.spawnSync(["bash", SCRIPT, "stop", poolerDir]);
  await database.destroy();
}

rows.sort((a, b) => String(a.workload).localeCompare(String(b.workload)));
printTable(`Pooled against direct PostgreSQL, one run (${CONNECTIONS} connections, ${SECONDS} s each, ${navigator.hardwareConcurrency} cores)`, rows);
