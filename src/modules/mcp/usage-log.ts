import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { mcpUsageLog, type UsageOutcome } from "../../db/schema";
import { newId } from "../../lib/crypto";
import { isConnectionError } from "../../lib/error-log";

export const SQL_TEXT_LIMIT = 2000;
const TOOL_NAME_LIMIT = 100;
const BATCH_SIZE = 5000;
/**
 * At most this many rows wait in memory. Past it (the database has been unreachable for a long
 * time under load) the newest rows are dropped and counted in `dropped`, which /ready reports.
 */
export const USAGE_QUEUE_LIMIT = 100_000;

/**
 * One JSON parameter per batch: PostgreSQL expands it with json_populate_recordset, which is
 * far cheaper than binding a dozen parameters per row (PGlite runs on the request thread).
 */
async function insertRows(db: Db, rows: UsageRow[]): Promise<void> {
  await db.execute(sql`insert into mcp_usage_log select * from json_populate_recordset(null::mcp_usage_log, ${JSON.stringify(rows)}::json)`);
}

/**
 * Text as the usage log can always store it: NUL shown as U+2400 (␀) and lone surrogates as
 * U+FFFD, cut to `limit` code points so a cut never splits a surrogate pair. The statement is
 * kept (visible), never dropped for its characters.
 */
export function storableText(text: string, limit: number): string {
  let safe = text.includes("\u0000") ? text.replaceAll("\u0000", "\u2400") : text;
  if (!safe.isWellFormed()) safe = safe.toWellFormed();
  if (safe.length <= limit) return safe;
  let cut = limit;
  const last = safe.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return safe.slice(0, cut);
}

type UsageRow = Omit<typeof mcpUsageLog.$inferInsert, "created_at"> & { created_at: string };

export interface UsageEntry {
  clinicId: string;
  apiKeyId: string;
  tool: string;
  statusCode: number;
  outcome: UsageOutcome;
  reason?: string | null;
  sqlText?: string | null;
  rowsReturned?: number | null;
  durationMs: number;
  requestId: string | null;
  at: Date;
}

/**
 * The usage log is written in batches off the request path: `record` only queues, and the
 * runtime's flush (on a timer and at shutdown) inserts, in the same transaction as the quota
 * counts of the same calls. A batch the database refuses is split until the row it
 * refuses is found; that row is stored without its statement text or, failing that, dropped and
 * counted, so one bad row never holds back the others. A batch that fails because the database
 * cannot be reached is put back whole and retried.
 */
export class UsageLog {
  private queue: UsageRow[] = [];
  /** Rows lost: refused by the database even in their safe form, or past USAGE_QUEUE_LIMIT. */
  dropped = 0;

  constructor(private readonly onDropped: (reason: string) => void = () => {}) {}

  record(entry: UsageEntry): void {
    if (this.queue.length >= USAGE_QUEUE_LIMIT) {
      this.drop("usage queue full");
      return;
    }
    this.queue.push({
      id: newId(),
      clinic_id: entry.clinicId,
      api_key_id: entry.apiKeyId,
      tool: storableText(entry.tool, TOOL_NAME_LIMIT),
      status_code: entry.statusCode,
      outcome: entry.outcome,
      reason: entry.reason == null ? null : storableText(entry.reason, SQL_TEXT_LIMIT),
      sql_text: entry.sqlText == null ? null : storableText(entry.sqlText, SQL_TEXT_LIMIT),
      rows_returned: entry.rowsReturned ?? null,
      duration_ms: Math.round(entry.durationMs),
      request_id: entry.requestId,
      created_at: entry.at.toISOString(),
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Takes up to one batch of queued rows for a flush; `putBack` returns them if it fails. */
  take(): UsageRow[] {
    return this.queue.splice(0, BATCH_SIZE);
  }

  putBack(rows: UsageRow[]): void {
    this.queue.unshift(...rows);
  }

  /**
   * Inserts `rows` inside `tx` (the flush's transaction). A refusal that is about the rows, not
   * the connection, is isolated by halving, each attempt in a savepoint so the transaction
   * survives it.
   */
  async insert(tx: Db, rows: UsageRow[]): Promise<void> {
    if (!rows.length) return;
    try {
      await tx.transaction((savepoint) => insertRows(savepoint, rows));
      return;
    } catch (error) {
      if (isConnectionError(error)) throw error;
      if (rows.length > 1) {
        const middle = Math.ceil(rows.length / 2);
        await this.insert(tx, rows.slice(0, middle));
        await this.insert(tx, rows.slice(middle));
        return;
      }
    }
    const [row] = rows as [UsageRow];
    try {
      await tx.transaction((savepoint) => insertRows(savepoint, [{ ...row, tool: "(unstorable)", sql_text: null, reason: "unstorable usage row" }]));
    } catch (error) {
      if (isConnectionError(error)) throw error;
      this.drop("usage row refused by the database");
    }
  }

  private drop(reason: string): void {
    this.dropped += 1;
    // Said once per kind of loss and then only counted, so a flood cannot fill the log.
    if (this.dropped === 1 || this.dropped % 10_000 === 0) this.onDropped(reason);
  }
}
