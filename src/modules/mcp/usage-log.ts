import type { Database } from "../../db/client";
import { mcpUsageLog, type UsageOutcome } from "../../db/schema";
import { newId } from "../../lib/crypto";

export const SQL_TEXT_LIMIT = 2000;
const BATCH_SIZE = 5000;

/**
 * One JSON parameter per batch: PostgreSQL expands it with json_populate_recordset, which is
 * far cheaper than binding a dozen parameters per row (PGlite runs on the request thread).
 */
const INSERT_BATCH = `insert into mcp_usage_log
  select * from json_populate_recordset(null::mcp_usage_log, $1::json)`;

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
 * The usage log is written in batches off the request path: `record` only queues, `flush`
 * (on a timer and at shutdown) inserts. A failed batch is put back and retried.
 */
export class UsageLog {
  private queue: UsageRow[] = [];
  private flushing: Promise<void> | undefined;

  constructor(private readonly database: Database) {}

  record(entry: UsageEntry): void {
    this.queue.push({
      id: newId(),
      clinic_id: entry.clinicId,
      api_key_id: entry.apiKeyId,
      tool: entry.tool.slice(0, 100),
      status_code: entry.statusCode,
      outcome: entry.outcome,
      reason: entry.reason ?? null,
      sql_text: entry.sqlText == null ? null : entry.sqlText.slice(0, SQL_TEXT_LIMIT),
      rows_returned: entry.rowsReturned ?? null,
      duration_ms: Math.round(entry.durationMs),
      request_id: entry.requestId,
      created_at: entry.at.toISOString(),
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  flush(): Promise<void> {
    this.flushing ??= this.drain().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, BATCH_SIZE);
      try {
        await this.database.query(INSERT_BATCH, [JSON.stringify(batch)]);
      } catch (error) {
        this.queue.unshift(...batch);
        throw error;
      }
    }
  }
}
