/**
 * A true sliding-window log: a key is admitted only if fewer than `limit` hits fall in the
 * last `windowMs`. Everything is synchronous, so a check-and-consume is atomic in one process.
 */
export interface WindowDecision {
  allowed: boolean;
  /** Hits still allowed in the current window after this decision. */
  remaining: number;
  /** When the oldest counted hit leaves the window (epoch ms); `now` if the window is empty. */
  resetAtMs: number;
  /** How long until one more hit would be admitted (ms); 0 when allowed. */
  retryAfterMs: number;
}

export class SlidingWindowLog {
  private readonly hits = new Map<string, number[]>();
  private operations = 0;

  constructor(readonly windowMs: number) {}

  /** Admits and records one hit if under `limit`; otherwise records nothing. */
  tryConsume(key: string, limit: number, nowMs: number): WindowDecision {
    const decision = this.peek(key, limit, nowMs);
    if (decision.allowed) {
      this.record(key, nowMs);
      return { ...decision, remaining: decision.remaining - 1 };
    }
    return decision;
  }

  /** What `tryConsume` would decide, without recording. */
  peek(key: string, limit: number, nowMs: number): WindowDecision {
    const log = this.prune(key, nowMs);
    const count = log?.length ?? 0;
    const oldest = log?.[0] ?? nowMs;
    if (count < limit) {
      return { allowed: true, remaining: limit - count, resetAtMs: oldest + (count ? this.windowMs : 0), retryAfterMs: 0 };
    }
    // The hit that must leave before one more fits is the (count - limit + 1)-th oldest.
    const blocking = log![count - limit]!;
    return { allowed: false, remaining: 0, resetAtMs: oldest + this.windowMs, retryAfterMs: blocking + this.windowMs - nowMs };
  }

  record(key: string, nowMs: number): void {
    let log = this.hits.get(key);
    if (!log) this.hits.set(key, (log = []));
    log.push(nowMs);
    if (++this.operations % 10_000 === 0) this.sweep(nowMs);
  }

  count(key: string, nowMs: number): number {
    return this.prune(key, nowMs)?.length ?? 0;
  }

  reset(key: string): void {
    this.hits.delete(key);
  }

  private prune(key: string, nowMs: number): number[] | undefined {
    const log = this.hits.get(key);
    if (!log) return undefined;
    const cutoff = nowMs - this.windowMs;
    let drop = 0;
    while (drop < log.length && log[drop]! <= cutoff) drop++;
    if (drop) log.splice(0, drop);
    if (log.length === 0) {
      this.hits.delete(key);
      return undefined;
    }
    return log;
  }

  /** Forgets keys whose hits have all left the window, so idle keys do not accumulate. */
  private sweep(nowMs: number): void {
    for (const key of this.hits.keys()) this.prune(key, nowMs);
  }
}
