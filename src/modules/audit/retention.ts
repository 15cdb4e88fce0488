import { sql } from "drizzle-orm";
import { rowsOf, type Database } from "../../db/client";
import { DAY, type Clock } from "../../lib/clock";
import type { Logger } from "../../lib/logger";

/** Events removed per statement, so a first run over years of events never holds one long lock. */
const BATCH = 10_000;

/**
 * EVENTS_RETENTION_DAYS: once a day, events older than that many days are deleted with their
 * finished deliveries. An event that still has a delivery pending stays until it is sent or
 * given up. Unset (the default), nothing removes events.
 */
export class EventRetention {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly deps: { database: Database; clock: Clock; logger: Logger },
    private readonly days: number | null,
  ) {}

  start(): void {
    if (this.days === null || this.timer) return;
    const run = () => void this.runOnce().catch((error) => this.deps.logger.error("event retention failed", { error: error instanceof Error ? error.message : String(error) }));
    this.timer = setInterval(run, DAY);
    this.timer.unref?.();
    run();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Deletes what is past retention now; resolves to the events and deliveries deleted. */
  async runOnce(): Promise<{ events: number; deliveries: number }> {
    if (this.days === null) return { events: 0, deliveries: 0 };
    const { database, clock, logger } = this.deps;
    const cutoff = new Date(clock.now().getTime() - this.days * DAY).toISOString();
    const count = (result: unknown) => Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
    // A delivery is made at or after its event: one made before the cutoff is an older event's.
    const deliveries = count(
      await database.db.execute(sql`with gone as (delete from webhook_deliveries where state <> 'pending' and created_at < ${cutoff}::timestamptz returning 1) select count(*)::int as n from gone`),
    );
    let events = 0;
    for (;;) {
      const removed = count(
        await database.db.execute(sql`
          with gone as (
            delete from events where id in (
              select e.id from events e
              where e.occurred_at < ${cutoff}::timestamptz and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
              limit ${BATCH})
            returning 1)
          select count(*)::int as n from gone`),
      );
      events += removed;
      if (removed < BATCH) break;
    }
    if (events || deliveries) logger.info("events past retention deleted", { events, deliveries, retention_days: this.days });
    return { events, deliveries };
  }
}
