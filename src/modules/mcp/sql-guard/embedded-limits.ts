import type { Database } from "../../../db/client";
import type { RawStatement } from "../../../db/read-only-batch";
import { AppError } from "../../../lib/errors";
import { LruMap } from "../../../lib/lru";
import { READABLE_TABLES } from "./readable-tables";

/**
 * Planner estimates of statements already let through, per database, clinic and text, so a repeated
 * query is not planned twice. Kept a minute: estimates follow the data as it grows.
 */
const COST_TTL_MS = 60_000;
const acceptedCosts = new WeakMap<Database, LruMap<string, number>>();
const acceptedCostsOf = (database: Database) => acceptedCosts.get(database) ?? acceptedCosts.set(database, new LruMap(1000)).get(database)!;

/**
 * The estimate is only as good as the table statistics, and PGlite has no autovacuum to keep
 * them: without them every clinic filter looks selective and an 8-way cross join looks cheap.
 * So, like autovacuum's analyze threshold but measured in pages (PGlite keeps no row counters),
 * the readable tables are analyzed before an estimate whenever one has grown or shrunk by more
 * than a tenth (an empty table by any page) since they last were.
 */
const TABLE_SIZES_SQL = `SELECT ${READABLE_TABLES.map((t, i) => `pg_relation_size('public.${t.name}') AS s${i}`).join(", ")}`;
const ANALYZE_SQL = `ANALYZE ${READABLE_TABLES.map((t) => `public.${t.name}`).join(", ")}`;
const analyzedSizes = new WeakMap<Database, number[]>();
const analyzing = new WeakMap<Database, Promise<void>>();

async function freshStatistics(database: Database): Promise<void> {
  const running = analyzing.get(database);
  if (running) return running;
  const [row] = await database.query<Record<string, unknown>>(TABLE_SIZES_SQL);
  const sizes = Object.values(row ?? {}).map(Number);
  const before = analyzedSizes.get(database);
  if (before && sizes.every((size, i) => Math.abs(size - before[i]!) <= before[i]! / 10)) return;
  const analysis = database.query(ANALYZE_SQL).then(() => void analyzedSizes.set(database, sizes));
  analyzing.set(database, analysis);
  try {
    await analysis;
  } finally {
    analyzing.delete(database);
  }
}

/**
 * Statements that ran past the timeout, per database and clinic, and when: PGlite could not stop
 * them, so for a while they are refused before they can occupy the database again.
 */
const OVERRUN_MEMORY_MS = 10 * 60_000;
const overruns = new WeakMap<Database, LruMap<string, { at: number; ms: number }>>();
const overrunsOf = (database: Database) => overruns.get(database) ?? overruns.set(database, new LruMap(1000)).get(database)!;

/** One query as the executor will run it: the clinic, its settings statement, the statement. */
export interface ClinicQuery {
  clinicId: string;
  settings: RawStatement;
  statement: RawStatement;
}
const keyOf = (query: ClinicQuery) => `${query.clinicId}\n${query.statement.text}`;

export interface EmbeddedLimits {
  timeoutMs: number;
  maxCost: number;
  /** Milliseconds from a monotonic clock (tests pass their own). */
  now: () => number;
}

/**
 * Before a statement runs on the embedded database, which cannot interrupt it (PGlite has no
 * timer signals, so statement_timeout does nothing): refuses, as QUERY_TIMEOUT, one that ran past
 * the timeout lately, and one whose planner estimate exceeds `maxCost`. `settings` are the
 * executor's (role, clinic), so the plan is the one the query would run.
 */
export async function refuseBeforeRunning(database: Database, query: ClinicQuery, limits: EmbeddedLimits): Promise<void> {
  const key = keyOf(query);
  const { settings, statement } = query;
  const overran = overrunsOf(database).get(key);
  if (overran && limits.now() - overran.at < OVERRUN_MEMORY_MS) {
    throw new AppError("QUERY_TIMEOUT", `This query ran ${Math.round(overran.ms)} ms a few minutes ago, past the limit of ${limits.timeoutMs} ms; narrow it down (filters, fewer joins)`, { previous_run_ms: Math.round(overran.ms), timeout_ms: limits.timeoutMs });
  }
  const accepted = acceptedCostsOf(database);
  const acceptedAt = accepted.get(key);
  if (acceptedAt !== undefined && limits.now() - acceptedAt < COST_TTL_MS) return;
  await freshStatistics(database);
  const [, plan] = await database.readOnlyBatch([settings, { text: `EXPLAIN (FORMAT JSON) ${statement.text}`, params: statement.params }]);
  const raw = plan?.rows[0]?.[0];
  const parsed = (typeof raw === "string" ? JSON.parse(raw) : raw) as { Plan: { "Total Cost": number } }[];
  const cost = parsed[0]?.Plan["Total Cost"] ?? 0;
  if (cost > limits.maxCost) {
    throw new AppError("QUERY_TIMEOUT", `The query is estimated to cost ${Math.round(cost)}, above the limit of ${limits.maxCost}; narrow it down (filters, fewer joins)`, { estimated_cost: Math.round(cost), max_cost: limits.maxCost });
  }
  accepted.set(key, limits.now());
}

/**
 * After it ran: a statement that took longer than the timeout gets the answer PostgreSQL would
 * have given (QUERY_TIMEOUT, its rows discarded), and is remembered so a retry is refused at once.
 */
export function refuseAfterOverrun(database: Database, query: ClinicQuery, elapsedMs: number, limits: EmbeddedLimits): void {
  if (elapsedMs <= limits.timeoutMs) return;
  overrunsOf(database).set(keyOf(query), { at: limits.now(), ms: elapsedMs });
  throw new AppError("QUERY_TIMEOUT", `The query ran ${Math.round(elapsedMs)} ms, past the limit of ${limits.timeoutMs} ms (the embedded database cannot stop it early); narrow it down`, { elapsed_ms: Math.round(elapsedMs), timeout_ms: limits.timeoutMs });
}
