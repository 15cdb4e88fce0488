import type { CopySession, Database } from "../../db/client";
import type { Clock } from "../../lib/clock";
import { SlidingWindowLog } from "../../lib/sliding-window";
import { nextUtcMidnight, utcDay } from "../../lib/time";

/** Whom a quota belongs to: an API key today, or anything with an id and the two limits. */
export interface QuotaPrincipal {
  id: string;
  rateLimitPerDay: number;
  burstPerMinute: number;
}

const BURST_WINDOW_MS = 60_000;
/**
 * A grant takes at most this share of what the database has left (but at least what the calls
 * waiting for it need), so that near the limit grants shrink to one call and instances that
 * ask later still find some: what one instance holds unused while another is refused is small.
 */
const GRANT_SHARE = 16;
/**
 * The most daily calls one grant takes (1000, or 1 % of the limit for larger limits): what a
 * killed instance can strand for the rest of the day, and how often a busy key asks.
 */
const maxDailyGrant = (limit: number) => Math.max(1000, Math.floor(limit / 100));
/** Burst calls granted and not used within this time go back. */
const BURST_GRANT_MS = 60_000;
/** Once the database refused a burst grant, calls are refused here without asking it again for this long. */
const REFUSAL_RECHECK_MS = 1000;

/** Locks the principal's counter row for the day (creating it), so grants for it are made one at a time. */
const LOCK_COUNTER = `
  INSERT INTO quota_counters (api_key_id, day, count, held) VALUES ($1, $2, 0, 0)
  ON CONFLICT (api_key_id, day) DO UPDATE SET count = quota_counters.count
  RETURNING count, held`;
/** The calls in the burst window (`second` later than `$2`); rows older than `$3` are deleted on the way. */
const BURST_WINDOW = `
  WITH expired AS (DELETE FROM quota_burst_seconds WHERE principal_id = $1 AND second < $3)
  SELECT second, calls FROM quota_burst_seconds WHERE principal_id = $1 AND second > $2 ORDER BY second`;
const HOLD_DAILY = "UPDATE quota_counters SET held = held + $3 WHERE api_key_id = $1 AND day = $2";
/** Calls whose usage rows are written in the same transaction: counted, and no longer held. */
const COUNT_WRITTEN = `
  INSERT INTO quota_counters (api_key_id, day, count, held) VALUES ($1, $2, $3, 0)
  ON CONFLICT (api_key_id, day) DO UPDATE
  SET count = quota_counters.count + excluded.count, held = GREATEST(quota_counters.held - excluded.count, 0)`;
const RELEASE_DAILY = "UPDATE quota_counters SET held = GREATEST(held - $3, 0) WHERE api_key_id = $1 AND day = $2";

/** Adds `calls` (negative to take away) to a principal's burst seconds, in one statement. */
async function addToBurstSeconds(session: CopySession, principalId: string, calls: Map<number, number>): Promise<void> {
  const entries = [...calls].filter(([, n]) => n !== 0).sort(([a], [b]) => a - b);
  if (!entries.length) return;
  const values = entries.map((_, i) => `($1, $${2 * i + 2}::bigint, $${2 * i + 3}::int)`).join(", ");
  await session.query(
    `INSERT INTO quota_burst_seconds (principal_id, second, calls) VALUES ${values}
     ON CONFLICT (principal_id, second) DO UPDATE SET calls = quota_burst_seconds.calls + excluded.calls`,
    [principalId, ...entries.flat()],
  );
}

function addTo(map: Map<number, number>, key: number, delta: number): void {
  map.set(key, (map.get(key) ?? 0) + delta);
}

/** A share of what is left, at least 1 when anything is. */
function share(left: number, max = Number.MAX_SAFE_INTEGER): number {
  return left > 0 ? Math.min(max, Math.max(1, Math.floor(left / GRANT_SHARE))) : 0;
}

interface DayAllowance {
  principalId: string;
  day: string;
  /** `count + held` in the database as last seen: every call of the day granted to any instance. */
  granted: number;
  /** Calls granted to this instance and not used yet (part of `held`). */
  unused: number;
}

interface BurstGrant {
  /** The second it is recorded at in the database: when it expires. */
  second: number;
  expiresAtMs: number;
  unused: number;
}

interface PrincipalBurst {
  grants: BurstGrant[];
  /** Changes to the database's burst seconds not written yet: used calls moved from their grant's second to their own. */
  unwritten: Map<number, number>;
  /** While the database refuses burst grants: when to ask it again, and when one more call should fit. */
  recheckAtMs: number;
  retryAtMs: number;
  /** Room the minute had left after this instance's last burst grant. */
  room: number;
  /** Calls waiting for the grant in progress. */
  waiting: number;
  granting?: Promise<void>;
  /** Changes a flush is writing: a grant waits for them, or it would read the minute without them. */
  returning?: { done: Promise<void>; settle: () => void };
}

export type QuotaDecision =
  | { admitted: true; day: string; limit: number; remaining: number; resetAt: Date }
  | { admitted: false; reason: "burst"; limitPerMinute: number; retryAfterSeconds: number; limit: number; remaining: number; resetAt: Date }
  | { admitted: false; reason: "daily"; limit: number; remaining: 0; resetAt: Date };

/** Calls whose usage rows a flush writes, per principal and day. */
export interface WrittenCalls {
  principalId: string;
  day: string;
  calls: number;
}

/** What a flush gives back to the database besides counts: unused daily grants and burst changes. */
export interface QuotaReturns {
  daily: { allowance: DayAllowance; calls: number }[];
  burst: { principalId: string; changes: Map<number, number>; settle: () => void }[];
}

/**
 * MCP quotas, one per principal across every instance on the database: a daily count per UTC
 * day and a sliding-minute burst cap. An instance admits a call only from calls the database
 * granted it, and a grant is made under a lock on the principal's counter row only while the
 * day's and the minute's grants stay within the limits, so N instances together never admit
 * more than the limit. A grant covers many calls while the principal is far from its limits
 * (a share of what is left), so those calls are admitted in process with no database round
 * trip; near a limit grants shrink to the calls waiting, down to one call per round trip.
 *
 * Calls are counted (`count`) by the flush that writes their usage rows, in the same
 * transaction, so the two agree whatever happens to the process. Within one process the
 * check-and-consume is synchronous, so it is exact under any concurrency.
 */
export class QuotaBook {
  private readonly allowances = new Map<string, DayAllowance>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly bursts = new Map<string, PrincipalBurst>();
  private readonly ownHits = new SlidingWindowLog(BURST_WINDOW_MS);

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
  ) {}

  /** Loads the principal's count for today from the database on first use of the day. */
  async prepare(principalId: string): Promise<void> {
    const day = utcDay(this.clock.now());
    const id = `${principalId}|${day}`;
    if (this.allowances.has(id)) return;
    let load = this.loading.get(id);
    if (!load) {
      load = (async () => {
        const [row] = await this.database.query<{ total: number }>(
          "SELECT count + held AS total FROM quota_counters WHERE api_key_id = $1 AND day = $2",
          [principalId, day],
        );
        if (!this.allowances.has(id)) this.allowances.set(id, { principalId, day, granted: row?.total ?? 0, unused: 0 });
      })().finally(() => this.loading.delete(id));
      this.loading.set(id, load);
    }
    await load;
  }

  /**
   * Burst, then daily: both are checked before either is consumed, so a burst refusal costs no
   * daily quota. Waits for the database only when this instance holds no granted call.
   */
  async admit(principal: QuotaPrincipal): Promise<QuotaDecision> {
    for (;;) {
      // Looked up on every turn: an idle principal's state is forgotten by `adoptTotals`, possibly while this call waited.
      const burst = this.burstOf(principal.id);
      const now = this.clock.now();
      const nowMs = now.getTime();
      const resetAt = nextUtcMidnight(now);
      const allowance = this.allowances.get(`${principal.id}|${utcDay(now)}`);
      if (!allowance) {
        await this.prepare(principal.id);
        continue;
      }
      const limit = principal.rateLimitPerDay;
      const used = Math.max(0, allowance.granted - allowance.unused);
      const refuseBurst = (retryAfterMs: number): QuotaDecision => ({
        admitted: false,
        reason: "burst",
        limitPerMinute: principal.burstPerMinute,
        retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
        limit,
        remaining: Math.max(0, limit - used),
        resetAt,
      });
      const own = this.ownHits.peek(principal.id, principal.burstPerMinute, nowMs);
      if (!own.allowed) return refuseBurst(own.retryAfterMs);
      this.expireGrants(burst, nowMs);
      const grant = burst.grants.find((g) => g.unused > 0);
      if (!grant && burst.recheckAtMs > nowMs) return refuseBurst(burst.retryAtMs - nowMs);
      if (allowance.unused === 0 && used >= limit) return { admitted: false, reason: "daily", limit, remaining: 0, resetAt };
      if (grant && allowance.unused > 0) {
        grant.unused -= 1;
        allowance.unused -= 1;
        // The call moves from its grant's second to its own.
        addTo(burst.unwritten, Math.ceil(nowMs / 1000), 1);
        addTo(burst.unwritten, grant.second, -1);
        this.ownHits.record(principal.id, nowMs);
        this.askAhead(principal, burst, allowance);
        return { admitted: true, day: allowance.day, limit, remaining: limit - used - 1, resetAt };
      }
      burst.waiting += 1;
      try {
        burst.granting ??= this.requestGrant(principal, burst, allowance).finally(() => (burst.granting = undefined));
        await burst.granting;
      } finally {
        burst.waiting -= 1;
      }
    }
  }

  /**
   * Far from both limits, the next grant is asked for as soon as this one is used up, off the
   * calls' path, so they never wait for the database. Near a limit it is not: a grant asked
   * ahead could sit unused here while another instance is refused.
   */
  private askAhead(principal: QuotaPrincipal, burst: PrincipalBurst, allowance: DayAllowance): void {
    if (burst.granting) return;
    const burstUsedUp = !burst.grants.some((g) => g.unused > 0);
    const dailyUsedUp = allowance.unused === 0;
    const roomy = (left: number) => left >= 4 * GRANT_SHARE;
    if (!burstUsedUp && !dailyUsedUp) return;
    if (burstUsedUp && !roomy(burst.room)) return;
    if (dailyUsedUp && !roomy(principal.rateLimitPerDay - allowance.granted)) return;
    burst.granting = this.requestGrant(principal, burst, allowance).finally(() => (burst.granting = undefined));
    // A failure is met again, and answered, by the next call that needs a grant.
    burst.granting.catch(() => {});
  }

  /** Today's count for a principal as this instance sees it. */
  used(principalId: string): number {
    const allowance = this.allowances.get(`${principalId}|${utcDay(this.clock.now())}`);
    return allowance ? Math.max(0, allowance.granted - allowance.unused) : 0;
  }

  /**
   * What a flush gives back: each principal's burst changes, daily grants of past days (or of
   * every day, at shutdown) and, at shutdown, unused burst grants. `restore` undoes the taking.
   */
  takeReturns(shuttingDown = false): QuotaReturns {
    const today = utcDay(this.clock.now());
    const nowMs = this.clock.now().getTime();
    const returns: QuotaReturns = { daily: [], burst: [] };
    for (const allowance of this.allowances.values()) {
      if (allowance.unused > 0 && (shuttingDown || allowance.day !== today)) {
        returns.daily.push({ allowance, calls: allowance.unused });
        allowance.unused = 0;
      }
    }
    for (const [principalId, burst] of this.bursts) {
      this.expireGrants(burst, shuttingDown ? Number.POSITIVE_INFINITY : nowMs);
      if (burst.unwritten.size && !burst.returning) {
        let settle!: () => void;
        const done = new Promise<void>((resolve) => (settle = resolve));
        const returning = { done, settle: () => {
          if (burst.returning === returning) burst.returning = undefined;
          settle();
        } };
        burst.returning = returning;
        returns.burst.push({ principalId, changes: burst.unwritten, settle: returning.settle });
        burst.unwritten = new Map();
      }
    }
    return returns;
  }

  /** After the flush's transaction committed. */
  committed(returns: QuotaReturns): void {
    for (const { settle } of returns.burst) settle();
  }

  restore(returns: QuotaReturns): void {
    for (const { allowance, calls } of returns.daily) allowance.unused += calls;
    for (const { principalId, changes, settle } of returns.burst) {
      const burst = this.burstOf(principalId);
      for (const [second, calls] of changes) addTo(burst.unwritten, second, calls);
      settle();
    }
  }

  /**
   * Inside the flush's transaction, after its usage rows: counts the calls those rows record
   * and writes what `takeReturns` took. Counters first, then burst seconds, each in principal
   * order, as grants take them, so two instances' transactions never wait on each other in a cycle.
   */
  async write(session: CopySession, written: WrittenCalls[], returns: QuotaReturns): Promise<void> {
    const byPrincipal = (a: { principalId: string; day: string }, b: { principalId: string; day: string }) =>
      a.principalId.localeCompare(b.principalId) || a.day.localeCompare(b.day);
    const counters = [
      ...written.map((w) => ({ principalId: w.principalId, day: w.day, sql: COUNT_WRITTEN, calls: w.calls })),
      ...returns.daily.map(({ allowance, calls }) => ({ principalId: allowance.principalId, day: allowance.day, sql: RELEASE_DAILY, calls })),
    ].sort(byPrincipal);
    for (const counter of counters) await session.query(counter.sql, [counter.principalId, counter.day, counter.calls]);
    for (const { principalId, changes } of [...returns.burst].sort((a, b) => a.principalId.localeCompare(b.principalId))) {
      await addToBurstSeconds(session, principalId, changes);
    }
  }

  /** Adopts the database totals (other instances' grants) of today's allowances and forgets what is done with. */
  async adoptTotals(): Promise<void> {
    const today = utcDay(this.clock.now());
    const nowMs = this.clock.now().getTime();
    const idle = [...this.allowances.values()].filter((a) => a.day === today && !this.bursts.get(a.principalId)?.granting);
    if (idle.length) {
      const rows = await this.database.query<{ principal_id: string; total: number }>(
        "SELECT api_key_id AS principal_id, count + held AS total FROM quota_counters WHERE day = $1 AND api_key_id = ANY($2::uuid[])",
        [today, `{${idle.map((a) => a.principalId).join(",")}}`],
      );
      for (const row of rows) {
        const allowance = this.allowances.get(`${row.principal_id}|${today}`);
        if (allowance && !this.bursts.get(row.principal_id)?.granting) allowance.granted = row.total;
      }
    }
    for (const [id, allowance] of this.allowances) if (allowance.day !== today && allowance.unused === 0) this.allowances.delete(id);
    for (const [principalId, burst] of this.bursts) {
      if (!burst.granting && !burst.returning && !burst.grants.length && !burst.unwritten.size && burst.recheckAtMs <= nowMs) this.bursts.delete(principalId);
    }
  }

  private burstOf(principalId: string): PrincipalBurst {
    let burst = this.bursts.get(principalId);
    if (!burst) this.bursts.set(principalId, (burst = { grants: [], unwritten: new Map(), recheckAtMs: 0, retryAtMs: 0, room: 0, waiting: 0 }));
    return burst;
  }

  /** Grants past their time give their unused calls back (written by the next grant or flush). */
  private expireGrants(burst: PrincipalBurst, nowMs: number): void {
    if (!burst.grants.some((g) => g.expiresAtMs <= nowMs || g.unused === 0)) return;
    burst.grants = burst.grants.filter((grant) => {
      if (grant.expiresAtMs > nowMs && grant.unused > 0) return true;
      if (grant.unused > 0) addTo(burst.unwritten, grant.second, -grant.unused);
      return false;
    });
  }

  /**
   * Asks the database for daily and burst calls for the calls waiting, under the lock on the
   * principal's counter row. Writes this instance's burst changes on the way, so the window it
   * reads is as exact as this instance can make it.
   */
  private async requestGrant(principal: QuotaPrincipal, burst: PrincipalBurst, allowance: DayAllowance): Promise<void> {
    await burst.returning?.done;
    const nowMs = this.clock.now().getTime();
    const nowSecond = Math.ceil(nowMs / 1000);
    const windowAfter = Math.floor((nowMs - BURST_WINDOW_MS) / 1000);
    const grantSecond = Math.ceil((nowMs + BURST_GRANT_MS) / 1000);
    this.expireGrants(burst, nowMs);
    const changes = burst.unwritten;
    burst.unwritten = new Map();
    let changesWritten = false;
    let outcome: { total: number; daily: number; burst: number; room: number; window: { second: number; calls: number }[] };
    try {
      outcome = await this.database.copyTransaction("write", async (session) => {
        const holdDaily = async (daily: number) => {
          if (daily) await session.query(HOLD_DAILY, [principal.id, allowance.day, daily]);
          return daily;
        };
        const [counter] = await session.query<{ count: number; held: number }>(LOCK_COUNTER, [principal.id, allowance.day]);
        // Sized only now, so that calls which arrived during the round trips are served by this grant.
        const waiting = Math.max(1, burst.waiting);
        const dailyLeft = Math.max(0, principal.rateLimitPerDay - counter!.count - counter!.held);
        const daily = allowance.unused >= waiting ? 0 : Math.min(dailyLeft, Math.max(waiting - allowance.unused, share(dailyLeft, maxDailyGrant(principal.rateLimitPerDay))));
        const unusedBurst = burst.grants.reduce((sum, g) => sum + g.unused, 0);
        if (unusedBurst >= waiting) return { total: counter!.count + counter!.held + daily, daily: await holdDaily(daily), burst: 0, room: burst.room, window: [] };
        await addToBurstSeconds(session, principal.id, changes);
        changesWritten = true;
        const window = (await session.query<{ second: string | number; calls: number }>(BURST_WINDOW, [principal.id, windowAfter, windowAfter - 60])).map((row) => ({
          second: Number(row.second),
          calls: row.calls,
        }));
        const burstLeft = Math.max(0, principal.burstPerMinute - window.reduce((sum, row) => sum + row.calls, 0));
        const burstCalls = Math.min(burstLeft, Math.max(waiting - unusedBurst, share(burstLeft)));
        await holdDaily(daily);
        if (burstCalls) await addToBurstSeconds(session, principal.id, new Map([[grantSecond, burstCalls]]));
        return { total: counter!.count + counter!.held + daily, daily, burst: burstCalls, room: burstLeft - burstCalls, window };
      });
    } catch (error) {
      for (const [second, calls] of changes) addTo(burst.unwritten, second, calls);
      throw error;
    }
    // Only the daily quota was asked for: the burst changes wait for the next grant or flush.
    if (!changesWritten) for (const [second, calls] of changes) addTo(burst.unwritten, second, calls);
    allowance.granted = outcome.total;
    allowance.unused += outcome.daily;
    burst.room = outcome.room;
    if (outcome.burst) {
      burst.grants.push({ second: grantSecond, expiresAtMs: nowMs + BURST_GRANT_MS, unused: outcome.burst });
      burst.recheckAtMs = 0;
    } else if (!burst.grants.some((g) => g.unused > 0)) {
      // The minute is full: the first call fits again once enough made calls leave it (calls
      // other instances hold unused may come back sooner; asked again after REFUSAL_RECHECK_MS).
      let excess = outcome.window.reduce((sum, row) => sum + row.calls, 0) - principal.burstPerMinute + 1;
      let retryAtMs = nowMs + BURST_WINDOW_MS;
      for (const row of outcome.window) {
        if (row.second > nowSecond) break;
        excess -= row.calls;
        if (excess <= 0) {
          retryAtMs = Math.min(retryAtMs, row.second * 1000 + BURST_WINDOW_MS);
          break;
        }
      }
      burst.retryAtMs = retryAtMs;
      burst.recheckAtMs = nowMs + REFUSAL_RECHECK_MS;
    }
  }
}
