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

/** Hit times of one key, oldest first; `start` skips expired ones so pruning is amortized O(1). */
interface HitLog {
  times: number[];
  start: number;
}

export class SlidingWindowLog {
  private readonly hits = new Map<string, HitLog>();
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
    const count = log ? log.times.length - log.start : 0;
    const oldest = log ? log.times[log.start]! : nowMs;
    if (count < limit) {
      return { allowed: true, remaining: limit - count, resetAtMs: oldest + (count ? this.windowMs : 0), retryAfterMs: 0 };
    }
    // The hit that must leave before one more fits is the (count - limit + 1)-th oldest.
    const blocking = log!.times[log!.start + count - limit]!;
    return { allowed: false, remaining: 0, resetAtMs: oldest + this.windowMs, retryAfterMs: blocking + this.windowMs - nowMs };
  }

  record(key: string, nowMs: number): void {
    let log = this.hits.get(key);
    if (!log) this.hits.set(key, (log = { times: [], start: 0 }));
    log.times.push(nowMs);
    if (++this.operations % 10_000 === 0) this.sweep(nowMs);
  }

  private prune(key: string, nowMs: number): HitLog | undefined {
    const log = this.hits.get(key);
    if (!log) return undefined;
    const cutoff = nowMs - this.windowMs;
    while (log.start < log.times.length && log.times[log.start]! <= cutoff) log.start++;
    if (log.start === log.times.length) {
      this.hits.delete(key);
      return undefined;
    }
    // Compact once the expired prefix is the larger half, so each hit is moved O(1) times.
    if (log.start > 1024 && log.start * 2 > log.times.length) {
      log.times = log.times.slice(log.start);
      log.start = 0;
    }
    return log;
  }

  /** Forgets keys whose hits have all left the window, so idle keys do not accumulate. */
  private sweep(nowMs: number): void {
    for (const key of this.hits.keys()) this.prune(key, nowMs);
  }
}
