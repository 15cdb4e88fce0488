/**
 * The clinic views against the base tables at ~1M visits: does a query through `mcp_read.*`
 * plan as well as the same logical question on the base tables? For each query class, the
 * service's path (the guarded statement exactly as `executeGuarded` sends it: READ ONLY, the
 * settings, the reader role, the `current_user` gate and LIMIT wrapper) against the base tables
 * filtered by clinic and `deleted_at IS NULL` (the peers' form), both as a read-only batch,
 * both prepared once seen, runs interleaved. Two states: tables never analyzed (autovacuum off
 * for the bench database's tables on PostgreSQL) and after ANALYZE. p50 of BENCH_RUNS runs
 * after a warm-up; where a ratio exceeds the target, the two plans' top nodes are printed.
 *
 *   bun bench/views.bench.ts                                      # embedded PGlite
 *   DATABASE_URL=postgres://… bun bench/views.bench.ts            # PostgreSQL
 *   BENCH_VISITS=200000 BENCH_RUNS=21 bun bench/views.bench.ts    # scale
 */
import type { RawStatement } from "../src/db/read-only-batch";
import { executeGuarded, ExecutorMemory, type QueryLimits } from "../src/modules/mcp/sql-guard/execute";
import { guardSql } from "../src/modules/mcp/sql-guard/guard";
import { createTestDatabase } from "../tests/helpers/database";
import { CLINIC_A, idOf, seedClinicsAtScale } from "./lib/clinic-at-scale";
import { median } from "./lib/load";
import { QUERIES, type QueryClass } from "./lib/query-classes";
import { databaseLabel, printTable, reportTarget } from "./lib/table";

const VISITS = Number(process.env.BENCH_VISITS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
/**
 * A sub-millisecond question gets more runs, until the two sides together have run this long
 * (at most MAX_RUNS): the median of 11 runs of 0.5 ms moved by a fifth between two runs of this bench.
 */
const MIN_SAMPLED_MS = 2_000;
const MAX_RUNS = 301;
const WARMUP = 2;
const TARGET = 1.2;

const database = await createTestDatabase();
const postgres = database.kind === "postgres";
const tables = (await database.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).map((t) => t.name);
// Nothing may analyze behind the bench's back: autovacuum is off for this database's tables.
if (postgres) for (const table of tables) await database.query(`ALTER TABLE public."${table}" SET (autovacuum_enabled = false)`);

const seeded = performance.now();
const { A, B } = await seedClinicsAtScale(database, VISITS);
const seedSeconds = (performance.now() - seeded) / 1000;
const [{ analyzed }] = (await database.query<{ analyzed: number }>(
  "SELECT count(*)::int AS analyzed FROM pg_stats WHERE schemaname = 'public' AND tablename IN ('tutors', 'patients', 'visits', 'invoices', 'payments')",
)) as [{ analyzed: number }];
if (analyzed) throw new Error("the seeded tables have statistics already; the first state would not be 'never analyzed'");

// The selective questions, besides the four classes: one patient's history, one day's agenda.
const PATIENT = idOf("patients", 1 + 4242 % A.patients);
const DAY = "2025-03-10";
const selective: QueryClass[] = [
  {
    label: "one patient's visits",
    ours: `SELECT id, status, scheduled_at, reason FROM visits WHERE patient_id = '${PATIENT}' ORDER BY scheduled_at DESC`,
    peers: (c) => `SELECT id, status, scheduled_at, reason FROM visits WHERE patient_id = '${PATIENT}' AND clinic_id = '${c}' AND deleted_at IS NULL ORDER BY scheduled_at DESC`,
  },
  {
    label: "one day's visits",
    ours: `SELECT id, patient_id, status, scheduled_at FROM visits WHERE scheduled_at >= '${DAY}' AND scheduled_at < '${DAY}'::date + 1 ORDER BY scheduled_at`,
    peers: (c) => `SELECT id, patient_id, status, scheduled_at FROM visits WHERE scheduled_at >= '${DAY}' AND scheduled_at < '${DAY}'::date + 1 AND clinic_id = '${c}' AND deleted_at IS NULL ORDER BY scheduled_at`,
  },
];

// The service's limits, with the bench's timeout (BENCH_TIMEOUT_MS; PostgreSQL only: PGlite
// cannot interrupt a statement). No maxCost: the embedded pre-check analyzes stale tables before
// it plans, which would end the first state (so a served embedded database never runs
// query_database without statistics; the base-table form gets no such help).
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 15_000);
const memory = new ExecutorMemory();
const limits: QueryLimits = { timeoutMs: TIMEOUT_MS, maxRows: 1000 };

interface Prepared {
  query: QueryClass;
  views: RawStatement[];
  base: RawStatement[];
}

/**
 * The statements executeGuarded sends for a query, captured from its call to readOnlyBatch
 * without running them (so the bench times exactly the service's SQL, settings and role, as
 * prepared as the service has it for a statement seen before), and the base-table form sent
 * the same way as the service's own user: the same settings minus the role, prepared too.
 */
async function prepare(query: QueryClass): Promise<Prepared> {
  const guarded = guardSql(query.ours);
  if (!guarded.ok) throw new Error(`${query.label}: refused by the guard: ${guarded.message}`);
  const sent: RawStatement[][] = [];
  const readOnlyBatch = database.readOnlyBatch;
  database.readOnlyBatch = async (statements) => (sent.push(statements), statements.map(() => ({ rows: [], fields: [] })));
  try {
    for (let i = 0; i < 2; i++) await executeGuarded(database, memory, CLINIC_A, guarded.sql, guarded.bindsClinic, limits);
  } finally {
    database.readOnlyBatch = readOnlyBatch;
  }
  const views = sent.at(-1)!;
  if (!views[1]?.prepare) throw new Error(`${query.label}: the executor did not prepare a statement seen before`);
  const settings = views[0]!;
  const base: RawStatement[] = [
    { text: "SELECT set_config('statement_timeout', $1, true), set_config('app.clinic_id', $2, true)", params: settings.params.slice(0, 2), prepare: true },
    { text: query.peers(CLINIC_A), params: [], prepare: true },
  ];
  return { query, views, base };
}

/** The plan under the same settings and role, one line a node. */
async function explain(statements: RawStatement[]): Promise<string[]> {
  const [settings, statement] = statements as [RawStatement, RawStatement];
  const [, plan] = await database.readOnlyBatch([settings, { text: `EXPLAIN ${statement.text}`, params: statement.params }]);
  return plan!.rows.map((row) => String(row[0]));
}
/** The plan's nodes from the top, without costs: `Limit → Sort → Seq Scan on visits`. */
const shape = (plan: string[], nodes = 7) =>
  plan
    .filter((line, i) => i === 0 || /^\s*->/.test(line))
    .slice(0, nodes)
    .map((line) => line.replace(/^\s*->\s*/, "").replace(/\s+\(cost=.*$/, ""))
    .join(" → ");

const isTimeout = (error: unknown) => (error as { code?: string })?.code === "57014";
const rows: Record<string, string | number>[] = [];
/** What the closing targets table takes: every ratio measured, and whether each query stayed within the target. */
const measuredRatios: number[] = [];
let everyQueryMet = true;
const plans: string[] = [];

async function measure(state: string) {
  for (const query of [...QUERIES, ...selective]) {
    const prepared = await prepare(query);
    const [viewPlan, basePlan] = [await explain(prepared.views), await explain(prepared.base)];
    const row = { query: query.label, state, rows: "", "views p50 ms": "", "base p50 ms": "", runs: "" as string | number, ratio: "", "target ≤ 1.2": "" };
    rows.push(row);
    // PGlite cannot stop a statement: a nested loop that compares every pair (no index to probe,
    // only a Join Filter) at this size would run for hours, so it is not started.
    if (!postgres && [viewPlan, basePlan].some((plan) => plan.some((line) => line.includes("Join Filter")))) {
      Object.assign(row, { "views p50 ms": "not run", "base p50 ms": "not run", ratio: "—", "target ≤ 1.2": "nested loop without index (not run)" });
      plans.push(`- ${query.label}, ${state}: views \`${shape(viewPlan)}\` — base \`${shape(basePlan)}\``);
      continue;
    }
    const samples = { views: [] as number[], base: [] as number[] };
    const timedOut = new Set<string>();
    const firstRun = { views: 0, base: 0 };
    let sampledMs = 0;
    let run = 0;
    for (; (run < WARMUP + RUNS || (sampledMs < MIN_SAMPLED_MS && run < WARMUP + MAX_RUNS)) && !timedOut.size; run++) {
      // Interleaved, alternating which goes first: a noisy moment hits both alike.
      const order = run % 2 ? (["base", "views"] as const) : (["views", "base"] as const);
      const results: unknown[][][] = [];
      for (const path of order) {
        const started = performance.now();
        try {
          const [, result] = await database.readOnlyBatch(prepared[path]);
          results.push(result!.rows);
        } catch (error) {
          if (!isTimeout(error)) throw error;
          timedOut.add(path);
          continue;
        }
        const elapsed = performance.now() - started;
        if (run === 0) firstRun[path] = elapsed;
        if (run >= WARMUP) {
          samples[path].push(elapsed);
          sampledMs += elapsed;
        }
      }
      if (run === 0 && results.length === 2) {
        const [a, b] = results as [unknown[][], unknown[][]];
        if (a.length !== b.length) throw new Error(`${query.label}: ${a.length} and ${b.length} rows`);
        if (query.label === "count(*)" && String(a[0]![0]) !== String(b[0]![0])) throw new Error(`count(*): ${a[0]![0]} and ${b[0]![0]}`);
        row.rows = String(a.length);
      }
    }
    if (timedOut.size) {
      const cell = (path: "views" | "base") => (timedOut.has(path) ? `> ${TIMEOUT_MS} (timeout)` : `${firstRun[path].toFixed(0)} (1 run)`);
      Object.assign(row, { "views p50 ms": cell("views"), "base p50 ms": cell("base"), ratio: "—", "target ≤ 1.2": "timeout" });
      everyQueryMet = false;
      plans.push(`- ${query.label}, ${state}: views \`${shape(viewPlan)}\` — base \`${shape(basePlan)}\``);
      continue;
    }
    const ratio = median(samples.views) / median(samples.base);
    const over = ratio > TARGET;
    measuredRatios.push(ratio);
    everyQueryMet &&= !over;
    Object.assign(row, {
      "views p50 ms": median(samples.views).toFixed(2),
      "base p50 ms": median(samples.base).toFixed(2),
      runs: run - WARMUP,
      ratio: over ? `**${ratio.toFixed(2)}**` : ratio.toFixed(2),
      "target ≤ 1.2": over ? "**not met**" : "✓",
    });
    if (over) {
      plans.push(`- ${query.label}, ${state}: views \`${shape(viewPlan)}\` — base \`${shape(basePlan)}\``);
      if (process.env.BENCH_PLANS) plans.push("", "  ```", "  views:", ...viewPlan.map((l) => `  ${l}`), "  base:", ...basePlan.map((l) => `  ${l}`), "  ```");
    }
  }
}

await measure("never analyzed");
await database.query(`ANALYZE ${tables.map((t) => `public."${t}"`).join(", ")}`);
await measure("after ANALYZE");
await database.destroy();

printTable(
  `Clinic views against base tables — ${databaseLabel()}, ${A.visits.toLocaleString("en")} visits of the clinic queried (+${B.visits.toLocaleString("en")} of another; seeded in ${seedSeconds.toFixed(1)} s), p50 of ${RUNS} runs or more (a fast question runs until the two sides together have run ${MIN_SAMPLED_MS / 1000} s, at most ${MAX_RUNS} runs)`,
  rows,
);
reportTarget({
  target: `clinic views within 1.2× of the base tables at ${VISITS.toLocaleString("en")} visits, analyzed or not (${databaseLabel()})`,
  measured: `${Math.min(...measuredRatios).toFixed(2)}–${Math.max(...measuredRatios).toFixed(2)}`,
  met: everyQueryMet,
});
if (plans.length) console.log(`\nPlans from the top node down, where the target is missed (BENCH_PLANS=1 prints them whole):\n\n${plans.join("\n")}`);
