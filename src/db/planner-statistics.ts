import type { Database } from "./client";
import { loggableError } from "../lib/error-log";
import type { Logger } from "../lib/logger";

/** How often the service looks for tables whose statistics went stale. */
export const STATISTICS_INTERVAL_MS = 5 * 60_000;
/**
 * The first look waits this long after listening: the embedded database runs one statement at a
 * time, and a start-up pass would hold back the first requests (and /ready) by tens of
 * milliseconds, or by seconds when it analyzes a large table.
 */
const FIRST_PASS_DELAY_MS = 1_000;

/**
 * A table is stale when it was never analyzed, or when more rows changed since its last ANALYZE
 * than autovacuum's own default threshold (50 rows + 10 %) would let pass.
 */
const STALE_TABLES = `
  SELECT relname AS name
  FROM pg_stat_user_tables
  WHERE schemaname = 'public'
    AND (coalesce(last_analyze, last_autoanalyze) IS NULL OR n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0))
  ORDER BY relname`;

/**
 * Keeps the planner's table statistics fresh. Without them (PGlite has no autovacuum, a seed or a
 * restore never runs ANALYZE, and many servers run with autovacuum off) the planner guesses row
 * counts, and a join through the clinic-scoped views that MCP queries read becomes a nested loop
 * several times slower than the same join on the base tables. Runs soon after start and then every
 * few minutes; ANALYZE reads a sample, so a pass over fresh tables costs one catalogue query.
 */
export class PlannerStatistics {
  private timer: ReturnType<typeof setInterval> | undefined;
  private firstPass: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<string[]> | undefined;

  constructor(
    private readonly database: Database,
    private readonly logger: Logger,
  ) {}

  /** Analyzes the stale tables; returns their names. Concurrent calls share one pass. */
  refresh(): Promise<string[]> {
    this.running ??= this.analyzeStale().finally(() => (this.running = undefined));
    return this.running;
  }

  /** A first pass a moment after start (in the background), then one every interval; failures are logged, never thrown. */
  start(intervalMs = STATISTICS_INTERVAL_MS): void {
    const pass = () => void this.refresh().catch((error) => this.logger.warn("planner statistics refresh failed", loggableError(error)));
    this.firstPass = setTimeout(pass, FIRST_PASS_DELAY_MS);
    this.timer = setInterval(pass, intervalMs);
    this.firstPass.unref?.();
    this.timer.unref?.();
  }

  async stop(): Promise<void> {
    clearTimeout(this.firstPass);
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  private async analyzeStale(): Promise<string[]> {
    const stale = (await this.database.maintenanceQuery(STALE_TABLES)) as { name: string }[];
    for (const { name } of stale) await this.database.maintenanceQuery(`ANALYZE public."${name.replaceAll('"', '""')}"`);
    if (stale.length) this.logger.debug("planner statistics refreshed", { tables: stale.length });
    return stale.map((table) => table.name);
  }
}
