import type { Config } from "../../../config";
import type { Database } from "../../../db/client";
import type { RawStatement } from "../../../db/read-only-batch";
import { isConnectionError } from "../../../lib/error-log";
import { pgErrorCode } from "../../../db/client";
import { AppError } from "../../../lib/errors";
import { rfc3339 } from "../../../lib/time";
import { LruMap } from "../../../lib/lru";
import { EmbeddedMemory, refuseAfterOverrun, refuseBeforeRunning } from "./embedded-limits";
import { READER_ROLE } from "./readable-tables";

export interface QueryLimits {
  timeoutMs: number;
  maxRows: number;
  /**
   * Set on the embedded database only, where statement_timeout cannot interrupt a running query
   * (PGlite runs on the server's own thread, without timer signals): statements whose planner
   * estimate exceeds this cost are refused, and the timeout is applied after the fact
   * (see embedded-limits.ts).
   */
  maxCost?: number;
  /** Milliseconds from a monotonic clock, for elapsed times (tests pass their own). */
  now?: () => number;
}

/** The limits a clinic query runs under on this database. */
export function limitsFor(database: Database, config: Config): QueryLimits {
  return {
    timeoutMs: config.queryTimeoutMs,
    maxRows: config.queryMaxRows,
    // PostgreSQL servers enforce statement_timeout; the embedded database needs the estimate.
    maxCost: database.kind === "postgres" ? undefined : config.queryMaxCost,
  };
}

export interface QueryResult {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  row_count: number;
  truncated: boolean;
  elapsed_ms: number;
}

/** Type names for the OIDs a clinic query can produce; anything else is reported as "unknown". */
const TYPE_NAMES: Record<number, string> = {
  16: "boolean", 20: "bigint", 21: "smallint", 23: "integer", 25: "text", 114: "json", 700: "real", 701: "double precision",
  1042: "char", 1043: "varchar", 1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz", 1186: "interval",
  1700: "numeric", 2950: "uuid", 3802: "jsonb", 19: "name", 26: "oid", 1000: "boolean[]", 1005: "smallint[]", 1007: "integer[]",
  1016: "bigint[]", 1009: "text[]", 1015: "varchar[]", 1182: "date[]", 1185: "timestamptz[]", 2951: "uuid[]", 1231: "numeric[]",
  3807: "jsonb[]", 199: "json[]", 2249: "record", 705: "unknown",
};

/**
 * JSON-safe values: bigint as a number when it fits in 2^53 (else a string), numeric as a
 * string (exact decimals), timestamps as RFC 3339 UTC, dates as YYYY-MM-DD.
 */
function jsonSafe(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((v) => jsonSafe(v, type.replace(/\[\]$/, "")));
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (type === "bigint" && typeof value === "string") return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  if (type === "numeric") return String(value);
  if (type === "date") return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10);
  if (type === "timestamptz" || type === "timestamp") {
    const date = value instanceof Date ? value : new Date(String(value).replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"));
    return Number.isNaN(date.getTime()) ? String(value) : rfc3339(date);
  }
  if (value instanceof Date) return rfc3339(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return value;
}

function toAppError(error: unknown, limits: QueryLimits): AppError {
  // A lost or refused connection is the database's outage, not the query's fault.
  if (isConnectionError(error)) return AppError.unavailable();
  const code = pgErrorCode(error);
  if (code === "57014") return new AppError("QUERY_TIMEOUT", `The query ran longer than ${limits.timeoutMs} ms and was cancelled`);
  if (code === "25006") return new AppError("QUERY_FAILED", "The query tried to write; only reading is allowed");
  if (code === "42501") return new AppError("QUERY_FAILED", "Permission denied: the query reads something outside the clinic views");
  // PostgreSQL's own message names what the query got wrong; anything else stays generic.
  if (!code) return new AppError("QUERY_FAILED", "The query failed");
  const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : "";
  return new AppError("QUERY_FAILED", `The query failed: ${message.slice(0, 300)}`, { sqlstate: code });
}

/** The timeout, the clinic, then the reader role, all local to the transaction, in one statement. */
const SETTINGS_SQL = "SELECT set_config('statement_timeout', $1, true), set_config('app.clinic_id', $2, true), set_config('role', $3, true)";

/**
 * Plans a guarded statement as the clinic would run it (same settings, role and bound values)
 * without running it: PostgreSQL's own check of names and types, for statements saved now and
 * run later. Refusals are QUERY_FAILED with PostgreSQL's message.
 */
export async function planGuarded(database: Database, clinicId: string, sql: string, bindsClinic: boolean, values: (string | null)[], limits: QueryLimits): Promise<void> {
  const settings: RawStatement = { text: SETTINGS_SQL, params: [String(Math.max(1, Math.floor(limits.timeoutMs))), clinicId, READER_ROLE] };
  try {
    await database.readOnlyBatch([settings, { text: `EXPLAIN ${sql}`, params: bindsClinic ? [clinicId, ...values] : values }]);
  } catch (error) {
    throw toAppError(error, limits);
  }
}

/** What the executor remembers between calls, owned by the app that runs them. */
export class ExecutorMemory {
  /**
   * Statements run recently (by hash), so that only a repeated one (a dashboard, an agent's
   * routine question) is kept prepared, not every one-off an agent explores with.
   */
  private readonly recentStatements = new LruMap<number | bigint, true>(1000);
  readonly embedded = new EmbeddedMemory();

  seenBefore(text: string): boolean {
    return this.recentStatements.touch(Bun.hash(text), true);
  }
}

/**
 * Runs an already-guarded statement as the clinic, in depth: a READ ONLY transaction, a
 * statement timeout, the reader role (SELECT on the clinic views only), the clinic pinned by
 * row-level security, one statement with the clinic id bound, and at most maxRows + 1 rows.
 * `values` are a saved report's arguments, bound after the clinic id (as text; the statement
 * casts each to its declared type).
 */
export async function executeGuarded(
  database: Database,
  memory: ExecutorMemory,
  clinicId: string,
  sql: string,
  bindsClinic: boolean,
  limits: QueryLimits,
  values: (string | null)[] = [],
): Promise<QueryResult> {
  if (!/^[0-9a-f-]{36}$/i.test(clinicId)) throw new AppError("INTERNAL_ERROR", "Invalid clinic id");
  const now = limits.now ?? (() => performance.now());
  const started = now();
  const settings: RawStatement = { text: SETTINGS_SQL, params: [String(Math.max(1, Math.floor(limits.timeoutMs))), clinicId, READER_ROLE], prepare: true };
  // The gate on current_user is a one-time filter: if the role switch did not happen, the
  // statement reads nothing instead of running as the service's own user.
  const text = `SELECT * FROM (${sql}\n) AS query_result WHERE current_user = '${READER_ROLE}' LIMIT ${Math.floor(limits.maxRows) + 1}`;
  const statement: RawStatement = { text, params: bindsClinic ? [clinicId, ...values] : values, prepare: memory.seenBefore(text) };
  try {
    const query = { clinicId, settings, statement };
    const embedded = limits.maxCost === undefined ? undefined : { timeoutMs: limits.timeoutMs, maxCost: limits.maxCost, now };
    if (embedded) await refuseBeforeRunning(database, memory.embedded, query, embedded);
    const [, result] = await database.readOnlyBatch([settings, statement]);
    if (embedded) refuseAfterOverrun(memory.embedded, query, now() - started, embedded);
    const seen = new Map<string, number>();
    const columns = result!.fields.map((field) => {
      const count = (seen.get(field.name) ?? 0) + 1;
      seen.set(field.name, count);
      return { name: count === 1 ? field.name : `${field.name}_${count}`, type: TYPE_NAMES[field.typeId] ?? "unknown" };
    });
    const truncated = result!.rows.length > limits.maxRows;
    const rows = result!.rows.slice(0, limits.maxRows).map((row) => Object.fromEntries(columns.map((c, i) => [c.name, jsonSafe(row[i], c.type)])));
    return { columns, rows, row_count: rows.length, truncated, elapsed_ms: Math.round((now() - started) * 100) / 100 };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw toAppError(error, limits);
  }
}
