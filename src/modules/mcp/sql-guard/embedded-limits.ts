import type { Database } from "../../../db/client";
import type { RawStatement } from "../../../db/read-only-batch";
import { AppError } from "../../../lib/errors";
import { LruMap } from "../../../lib/lru";
import { READ_BASE_TABLES } from "./readable-tables";

/** Planner estimates are trusted for a minute: they follow the data as it grows. */
const COST_TTL_MS = 60_000;
/** Statements that overran are refused at once for ten minutes. */
const OVERRUN_MEMORY_MS = 10 * 60_000;

/**
 * What the embedded limits remember about one database, owned by the app that queries it (so
 * two apps in one process share nothing):
 * - planner estimates of statements already let through, per clinic and text, so a repeated
 *   query is not planned twice;
 * - the table sizes at the last ANALYZE, and the ANALYZE under way;
 * - statements that ran past the timeout, per clinic and text, and when: PGlite could not stop
 *   them, so for a while they are refused before they can occupy the database again.
 */
export class EmbeddedMemory {
  readonly acceptedCosts = new LruMap<string, number>(1000);
  readonly overruns = new LruMap<string, { at: number; ms: number }>(1000);
  analyzedSizes: number[] | undefined;
  analyzing: Promise<void> | undefined;
}

/**
 * The estimate is only as good as the table statistics, and PGlite has no autovacuum to keep
 * them: without them every clinic filter looks selective and an 8-way cross join looks cheap.
 * So, like autovacuum's analyze threshold but measured in pages (PGlite keeps no row counters),
 * the readable tables are analyzed before an estimate whenever one has grown or shrunk by more
 * than a tenth (an empty table by any page) since they last were.
 */
const TABLE_SIZES_SQL = `SELECT ${READ_BASE_TABLES.map((name, i) => `pg_relation_size('public.${name}') AS s${i}`).join(", ")}`;
const ANALYZE_SQL = `ANALYZE ${READ_BASE_TABLES.map((name) => `public.${name}`).join(", ")}`;
async function freshStatistics(database: Database, memory: EmbeddedMemory): Promise<void> {
  if (memory.analyzing) return memory.analyzing;
  const [row] = await database.query<Record<string, unknown>>(TABLE_SIZES_SQL);
  const sizes = Object.values(row ?? {}).map(Number);
  const before = memory.analyzedSizes;
  if (before && sizes.every((size, i) => Math.abs(size - before[i]!) <= before[i]! / 10)) return;
  memory.analyzing = database.query(ANALYZE_SQL).then(() => void (memory.analyzedSizes = sizes));
  try {
    await memory.analyzing;
  } finally {
    memory.analyzing = undefined;
  }
}

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
export async function refuseBeforeRunning(database: Database, memory: EmbeddedMemory, query: ClinicQuery, limits: EmbeddedLimits): Promise<void> {
  const key = keyOf(query);
  const { settings, statement } = query;
  const overran = memory.overruns.get(key);
  if (overran && limits.now() - overran.at < OVERRUN_MEMORY_MS) {
    throw new AppError("QUERY_TIMEOUT", `This query ran ${Math.round(overran.ms)} ms a few minutes ago, past the limit of ${limits.timeoutMs} ms; narrow it down (filters, fewer joins)`, { previous_run_ms: Math.round(overran.ms), timeout_ms: limits.timeoutMs });
  }
  const accepted = memory.acceptedCosts;
  const acceptedAt = accepted.get(key);
  if (acceptedAt !== undefined && limits.now() - acceptedAt < COST_TTL_MS) return;
  await freshStatistics(database, memory);
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
export function refuseAfterOverrun(memory: EmbeddedMemory, query: ClinicQuery, elapsedMs: number, limits: EmbeddedLimits): void {
  if (elapsedMs <= limits.timeoutMs) return;
  memory.overruns.set(keyOf(query), { at: limits.now(), ms: elapsedMs });
  throw new AppError("QUERY_TIMEOUT", `The query ran ${Math.round(elapsedMs)} ms, past the limit of ${limits.timeoutMs} ms (the embedded database cannot stop it early); narrow it down`, { elapsed_ms: Math.round(elapsedMs), timeout_ms: limits.timeoutMs });
}
