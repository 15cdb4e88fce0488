import { and, eq, inArray } from "drizzle-orm";
import type { CopySession, Db } from "../../db/client";
import { quotaCounters } from "../../db/schema";
import type { Clock } from "../../lib/clock";
import { SlidingWindowLog } from "../../lib/sliding-window";
import { nextUtcMidnight, utcDay } from "../../lib/time";
import type { KeyPrincipal } from "../mcp-keys/directory";

const ADD_TO_COUNTER = `
  INSERT INTO quota_counters (api_key_id, day, count) VALUES ($1, $2, $3)
  ON CONFLICT (api_key_id, day) DO UPDATE SET count = quota_counters.count + excluded.count
  RETURNING count`;

interface DayCounter {
  keyId: string;
  day: string;
  /** The database total as last seen (this and other instances' flushed calls). */
  base: number;
  /** Calls admitted here and not yet flushed. */
  pending: number;
}

export type QuotaDecision =
  | { admitted: true; limit: number; remaining: number; resetAt: Date }
  | { admitted: false; reason: "burst"; limitPerMinute: number; retryAfterSeconds: number; limit: number; remaining: number; resetAt: Date }
  | { admitted: false; reason: "daily"; limit: number; remaining: 0; resetAt: Date };

export interface QuotaDelta {
  counter: DayCounter;
  delta: number;
}

/**
 * MCP quotas in process: a daily count per key and UTC day, and a true sliding-window burst
 * cap. `admit` is synchronous, so within one process the check-and-consume is exact under
 * any concurrency. Counts reach the database as deltas (`count = count + delta`), and each
 * flush adopts the database total, so instances sharing a database converge.
 */
export class QuotaBook {
  private readonly counters = new Map<string, DayCounter>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly burst = new SlidingWindowLog(60_000);

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** Loads the key's count for today from the database on first use of the day. */
  async prepare(keyId: string): Promise<void> {
    const day = utcDay(this.clock.now());
    const id = `${keyId}|${day}`;
    if (this.counters.has(id)) return;
    let load = this.loading.get(id);
    if (!load) {
      load = (async () => {
        const [row] = await this.db
          .select({ count: quotaCounters.count })
          .from(quotaCounters)
          .where(and(eq(quotaCounters.api_key_id, keyId), eq(quotaCounters.day, day)));
        if (!this.counters.has(id)) this.counters.set(id, { keyId, day, base: row?.count ?? 0, pending: 0 });
      })().finally(() => this.loading.delete(id));
      this.loading.set(id, load);
    }
    await load;
  }

  /**
   * Burst, then daily: both are checked before either is consumed, so a burst refusal costs
   * no daily quota. Call `prepare` first. No `await` in here.
   */
  admit(key: KeyPrincipal): QuotaDecision {
    const now = this.clock.now();
    const resetAt = nextUtcMidnight(now);
    const counter = this.counterFor(key.id, now);
    const limit = key.rateLimitPerDay;
    const used = counter.base + counter.pending;
    const burst = this.burst.peek(key.id, key.burstPerMinute, now.getTime());
    if (!burst.allowed) {
      return {
        admitted: false,
        reason: "burst",
        limitPerMinute: key.burstPerMinute,
        retryAfterSeconds: Math.max(1, Math.ceil(burst.retryAfterMs / 1000)),
        limit,
        remaining: Math.max(0, limit - used),
        resetAt,
      };
    }
    if (used >= limit) return { admitted: false, reason: "daily", limit, remaining: 0, resetAt };
    this.burst.record(key.id, now.getTime());
    counter.pending += 1;
    return { admitted: true, limit, remaining: limit - used - 1, resetAt };
  }

  /** Today's count for a key as this instance sees it. */
  used(keyId: string): number {
    const counter = this.counters.get(`${keyId}|${utcDay(this.clock.now())}`);
    return counter ? counter.base + counter.pending : 0;
  }

  /** The deltas a flush will write: each counter's pending calls at this moment. */
  takeDeltas(): QuotaDelta[] {
    return [...this.counters.values()].filter((c) => c.pending > 0).map((counter) => ({ counter, delta: counter.pending }));
  }

  /** Adds the deltas to the database totals inside the flush's transaction; returns the new totals. */
  async writeDeltas(session: CopySession, deltas: QuotaDelta[]): Promise<number[]> {
    const totals: number[] = [];
    for (const { counter, delta } of deltas) {
      const [row] = await session.query<{ count: number }>(ADD_TO_COUNTER, [counter.keyId, counter.day, delta]);
      totals.push(row!.count);
    }
    return totals;
  }

  /** After the flush's transaction committed: the written calls are now in the totals. */
  committed(deltas: QuotaDelta[], totals: number[]): void {
    deltas.forEach(({ counter, delta }, index) => {
      // Calls admitted while the flush ran stay pending for the next one.
      counter.pending -= delta;
      counter.base = totals[index]!;
    });
  }

  /** Adopts the database totals of idle counters (other instances' calls) and forgets past days. */
  async adoptTotals(): Promise<void> {
    const today = utcDay(this.clock.now());
    const idle = [...this.counters.values()].filter((c) => c.day === today && c.pending === 0);
    if (idle.length) {
      const rows = await this.db
        .select({ keyId: quotaCounters.api_key_id, count: quotaCounters.count })
        .from(quotaCounters)
        .where(and(eq(quotaCounters.day, today), inArray(quotaCounters.api_key_id, idle.map((c) => c.keyId))));
      for (const row of rows) {
        const counter = this.counters.get(`${row.keyId}|${today}`);
        if (counter) counter.base = Math.max(counter.base, row.count);
      }
    }
    for (const [id, counter] of this.counters) if (counter.day !== today && counter.pending === 0) this.counters.delete(id);
  }

  private counterFor(keyId: string, now: Date): DayCounter {
    const day = utcDay(now);
    const id = `${keyId}|${day}`;
    let counter = this.counters.get(id);
    // `prepare` normally loaded it; a day that turned between prepare and admit starts at 0.
    if (!counter) this.counters.set(id, (counter = { keyId, day, base: 0, pending: 0 }));
    return counter;
  }
}
