import type { CopySession } from "../../db/client";
import type { UsageOutcome } from "../../db/schema";
import { newId } from "../../lib/crypto";
import { isConnectionError } from "../../lib/error-log";
import type { WrittenCalls } from "./quotas";

export const SQL_TEXT_LIMIT = 2000;
const TOOL_NAME_LIMIT = 100;
const BATCH_SIZE = 5000;
/**
 * At most this many rows wait in memory. Past it (the database has been unreachable for a long
 * time under load) the newest rows are dropped and counted in `dropped`, which /ready reports.
 */
export const USAGE_QUEUE_LIMIT = 100_000;

/** The columns of a queued row, in the order of its fields. */
const USAGE_COLUMNS = ["id", "clinic_id", "api_key_id", "tool", "status_code", "outcome", "reason", "sql_text", "rows_returned", "duration_ms", "request_id", "created_at"];
const TOOL_FIELD = 3;
const REASON_FIELD = 6;
const SQL_TEXT_FIELD = 7;
const COPY_ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

/** One field in COPY's text format: `\N` for null, and the four characters it reserves escaped. */
function copyField(value: string | number | null): string {
  if (value === null) return "\\N";
  if (typeof value === "number") return String(value);
  return value.replace(/[\\\t\n\r]/g, (character) => COPY_ESCAPES[character]!);
}

/**
 * Rows go in with COPY: cheaper for the database than any INSERT (a third less time per row on
 * PostgreSQL, an eighth less on PGlite, which runs on the request thread), and a queued row is
 * one string rather than an object of twelve fields.
 */
async function copyRows(session: CopySession, lines: string[]): Promise<void> {
  await session.copyIn("mcp_usage_log", USAGE_COLUMNS, new TextEncoder().encode(lines.join("")));
}

/** Runs `work` in a savepoint, so that a refusal leaves the flush's transaction usable. */
async function inSavepoint(session: CopySession, work: () => Promise<void>): Promise<void> {
  await session.query("SAVEPOINT usage_rows");
  try {
    await work();
  } catch (error) {
    if (!isConnectionError(error)) await session.query("ROLLBACK TO SAVEPOINT usage_rows");
    throw error;
  }
  await session.query("RELEASE SAVEPOINT usage_rows");
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
  /** For a call the quota admitted: whose quota and which UTC day it counts on (the flush counts it with its row). */
  countedAgainst?: { principalId: string; day: string } | null;
}

/** Rows taken for one flush, and for each the quota counter it counts on (`principal|day`), if any. */
export interface UsageBatch {
  lines: string[];
  counted: (string | null)[];
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
  /** Queued rows, each a line of COPY text. */
  private queue: string[] = [];
  /** For each queued row, the counter it counts on, if any (kept beside the text so a row stays one string). */
  private counted: (string | null)[] = [];
  /** Rows lost: refused by the database even in their safe form, or past USAGE_QUEUE_LIMIT. */
  dropped = 0;

  constructor(private readonly onDropped: (reason: string) => void = () => {}) {}

  record(entry: UsageEntry): void {
    if (this.queue.length >= USAGE_QUEUE_LIMIT) {
      this.drop("usage queue full");
      return;
    }
    const fields = [
      newId(),
      entry.clinicId,
      entry.apiKeyId,
      storableText(entry.tool, TOOL_NAME_LIMIT),
      entry.statusCode,
      entry.outcome,
      entry.reason == null ? null : storableText(entry.reason, SQL_TEXT_LIMIT),
      entry.sqlText == null ? null : storableText(entry.sqlText, SQL_TEXT_LIMIT),
      entry.rowsReturned ?? null,
      Math.round(entry.durationMs),
      entry.requestId,
      entry.at.toISOString(),
    ];
    this.queue.push(`${fields.map(copyField).join("\t")}\n`);
    this.counted.push(entry.countedAgainst ? `${entry.countedAgainst.principalId}|${entry.countedAgainst.day}` : null);
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Takes up to one batch of queued rows for a flush; `putBack` returns them if it fails. */
  take(): UsageBatch {
    return { lines: this.queue.splice(0, BATCH_SIZE), counted: this.counted.splice(0, BATCH_SIZE) };
  }

  putBack(batch: UsageBatch): void {
    this.queue.unshift(...batch.lines);
    this.counted.unshift(...batch.counted);
  }

  /** The admitted calls a batch records, per principal and day, leaving out rows `insert` dropped. */
  static writtenCalls(batch: UsageBatch, dropped: ReadonlySet<string>): WrittenCalls[] {
    const calls = new Map<string, number>();
    batch.counted.forEach((counter, index) => {
      if (counter && !dropped.has(batch.lines[index]!)) calls.set(counter, (calls.get(counter) ?? 0) + 1);
    });
    return [...calls].map(([counter, n]) => {
      const [principalId, day] = counter.split("|") as [string, string];
      return { principalId, day, calls: n };
    });
  }

  /**
   * Writes `rows` inside the flush's transaction. A refusal that is about the rows, not the
   * connection, is isolated by halving, each attempt in a savepoint so the transaction survives.
   * Returns the rows dropped (neither they nor their calls are written).
   */
  async insert(session: CopySession, rows: string[], dropped = new Set<string>()): Promise<Set<string>> {
    if (!rows.length) return dropped;
    try {
      await inSavepoint(session, () => copyRows(session, rows));
      return dropped;
    } catch (error) {
      if (isConnectionError(error)) throw error;
      if (rows.length > 1) {
        const middle = Math.ceil(rows.length / 2);
        await this.insert(session, rows.slice(0, middle), dropped);
        await this.insert(session, rows.slice(middle), dropped);
        return dropped;
      }
    }
    const fields = rows[0]!.slice(0, -1).split("\t");
    fields[TOOL_FIELD] = "(unstorable)";
    fields[REASON_FIELD] = "unstorable usage row";
    fields[SQL_TEXT_FIELD] = "\\N";
    try {
      await inSavepoint(session, () => copyRows(session, [`${fields.join("\t")}\n`]));
    } catch (error) {
      if (isConnectionError(error)) throw error;
      this.drop("usage row refused by the database");
      dropped.add(rows[0]!);
    }
    return dropped;
  }

  private drop(reason: string): void {
    this.dropped += 1;
    // Said once per kind of loss and then only counted, so a flood cannot fill the log.
    if (this.dropped === 1 || this.dropped % 10_000 === 0) this.onDropped(reason);
  }
}
