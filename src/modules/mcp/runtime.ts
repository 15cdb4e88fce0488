import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import { apiKeys, oauthConnections } from "../../db/schema";
import type { Clock } from "../../lib/clock";
import { loggableError } from "../../lib/error-log";
import type { Logger } from "../../lib/logger";
import { ApiKeyDirectory, type KeyPrincipal } from "../mcp-keys/directory";
import { QuotaBook } from "./quotas";
import { ReportCatalog } from "./report-catalog";
import { SqlEngine } from "./sql-guard/engine";
import { registered, type RegisteredTool, type ToolDefinition } from "./registry";
import { UsageLog } from "./usage-log";

const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface McpRuntimeDeps {
  database: Database;
  clock: Clock;
  config: Config;
  logger: Logger;
  tools: ToolDefinition[];
}

/**
 * The MCP side's in-process state: key cache, quotas, usage-log queue and the tool registry,
 * flushed every QUOTA_FLUSH_MS and once more at shutdown.
 */
export class McpRuntime {
  readonly keys: ApiKeyDirectory;
  readonly quotas: QuotaBook;
  readonly usage: UsageLog;
  /** The built-in tools by name, used by `/mcp/tools`, `/mcp/tools/{tool}/invoke` and `POST /mcp`. */
  readonly registry: ReadonlyMap<string, RegisteredTool>;
  readonly reports: ReportCatalog;
  readonly sql: SqlEngine;
  readonly ready: Promise<void>;
  private readonly usedSinceFlush = new Map<string, { at: Date; kind: KeyPrincipal["kind"] }>();
  private readonly lastUsedWritten = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private flushing: Promise<void> | undefined;
  private nextFlush: Promise<void> | undefined;
  private sdkSession: Promise<unknown> | undefined;

  constructor(readonly deps: McpRuntimeDeps) {
    this.keys = new ApiKeyDirectory(deps.database, deps.clock, deps.logger);
    this.quotas = new QuotaBook(deps.database, deps.clock);
    this.usage = new UsageLog((reason) => deps.logger.warn("usage rows dropped", { reason, dropped_total: this.usage.dropped }));
    this.registry = new Map(deps.tools.map((tool) => [tool.name, registered(tool)]));
    this.reports = new ReportCatalog(deps.database);
    this.sql = new SqlEngine(deps.database, deps.config);
    // Without the listener the key cache stays off (every call reads the key), so `ready` never fails.
    this.ready = this.keys.start().catch((error) => deps.logger.error("api key listener failed; key cache disabled", loggableError(error)));
    this.timer = setInterval(() => {
      this.flush().catch((error) => deps.logger.error("mcp flush failed", loggableError(error)));
    }, deps.config.quotaFlushMs);
    this.timer.unref?.();
  }

  /**
   * The tools a key may call, what `tools/list` and `GET /mcp/tools` show it: the built-in ones
   * and its clinic's saved reports, each only with its scope. Calling another tool is still
   * answered (403 INSUFFICIENT_SCOPE, counted), in the contract's order.
   */
  async toolsFor(key: KeyPrincipal): Promise<ToolDefinition[]> {
    const reports = await this.reports.forClinic(key.clinicId);
    return [...this.registry.values(), ...reports].filter((tool) => key.scopes.includes(tool.scope));
  }

  /** A built-in tool or one of the key's clinic's saved reports, by name, whatever its scope. */
  async findTool(key: KeyPrincipal, name: string): Promise<RegisteredTool | undefined> {
    return this.registry.get(name) ?? (await this.reports.find(key.clinicId, name));
  }

  /**
   * The MCP SDK's side of POST /mcp, loaded with the first call (about 20 MB an idle server need
   * not hold). The caller names the module, so this file does not import the SDK's side, which
   * imports the tools' invocation, which reads this runtime.
   */
  sdk<Session>(load: () => Promise<Session>): Promise<Session> {
    return (this.sdkSession ??= load()) as Promise<Session>;
  }

  /** Remembers that a key or connection was used; `last_used_at` is written by the flush, at most once a minute each. */
  noteKeyUsed(key: Pick<KeyPrincipal, "id" | "kind">): void {
    this.usedSinceFlush.set(key.id, { at: this.deps.clock.now(), kind: key.kind });
  }

  /**
   * Writes quota counts and usage rows: everything queued before the call is written when it
   * resolves. A flush under way is followed by one more, which concurrent callers share.
   */
  flush(shuttingDown = false): Promise<void> {
    if (!this.flushing) return this.startFlush(shuttingDown);
    this.nextFlush ??= this.flushing.catch(() => {}).then(() => {
      this.nextFlush = undefined;
      return this.startFlush(shuttingDown);
    });
    return this.nextFlush;
  }

  private startFlush(shuttingDown: boolean): Promise<void> {
    const flushing = this.flushOnce(shuttingDown).finally(() => {
      if (this.flushing === flushing) this.flushing = undefined;
    });
    this.flushing = flushing;
    return flushing;
  }

  /**
   * Each round writes a batch of usage rows and counts the calls they record in ONE
   * transaction, so a crash (even SIGKILL) loses both or neither and the two never disagree.
   * Grants this instance no longer needs go back in the same transaction.
   */
  private async flushOnce(shuttingDown: boolean): Promise<void> {
    do {
      const batch = this.usage.take();
      const returns = this.quotas.takeReturns(shuttingDown);
      if (!batch.lines.length && !returns.daily.length && !returns.burst.length) break;
      try {
        await this.deps.database.copyTransaction("write", async (session) => {
          const dropped = await this.usage.insert(session, batch.lines);
          await this.quotas.write(session, UsageLog.writtenCalls(batch, dropped), returns);
        });
      } catch (error) {
        this.usage.putBack(batch);
        this.quotas.restore(returns);
        throw error;
      }
      this.quotas.committed(returns);
    } while (this.usage.pending > 0);
    await this.quotas.adoptTotals();
    await this.writeLastUsed();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    try {
      // Unused grants go back, so the other instances can use them (a flush under way would not give them).
      await this.flush().catch(() => {});
      await this.flush(true);
    } catch (error) {
      // Shutdown goes on: the database still closes. What was not written is said by count only.
      this.deps.logger.error("final mcp flush failed; unwritten usage rows are lost", { unwritten_rows: this.usage.pending, ...loggableError(error) });
    }
    await this.keys.stop();
  }

  private async writeLastUsed(): Promise<void> {
    for (const [keyId, { at, kind }] of [...this.usedSinceFlush]) {
      this.usedSinceFlush.delete(keyId);
      const written = this.lastUsedWritten.get(keyId);
      if (written !== undefined && at.getTime() - written < LAST_USED_WRITE_INTERVAL_MS) continue;
      const threshold = new Date(at.getTime() - LAST_USED_WRITE_INTERVAL_MS);
      const table = kind === "key" ? apiKeys : oauthConnections;
      await this.deps.database.db
        .update(table)
        .set({ last_used_at: at })
        .where(and(eq(table.id, keyId), or(isNull(table.last_used_at), lt(table.last_used_at, threshold))));
      this.lastUsedWritten.set(keyId, at.getTime());
    }
  }
}
