import { AppError } from "../lib/errors";
import { MINUTE, type Clock } from "../lib/clock";
import { SlidingWindowLog } from "../lib/sliding-window";
import type { RestLimits } from "../config";

export interface RateLimitHeaders {
  "x-ratelimit-limit": string;
  "x-ratelimit-remaining": string;
  "x-ratelimit-reset": string;
}

const headersOf = (limit: number, remaining: number, resetAtMs: number): RateLimitHeaders => ({
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(Math.max(0, remaining)),
  "x-ratelimit-reset": String(Math.ceil(resetAtMs / 1000)),
});

function tooMany(code: "TOO_MANY_ATTEMPTS" | "RATE_LIMIT_EXCEEDED", message: string, retryAfterMs: number, headers: RateLimitHeaders) {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError(code, message, { retry_after: retryAfter }, { ...headers, "retry-after": String(retryAfter) });
}

/** The caller's address as the listener saw it ("local" for a request handled in process). */
export function clientIp(server: { requestIP(r: Request): { address: string } | null } | null, request: Request): string {
  return server?.requestIP(request)?.address ?? "local";
}

/**
 * REST rate limits, in process (each instance counts its own traffic):
 * login/register per IP, failed logins per email, the OAuth server's open endpoints per IP,
 * and every other call per user.
 */
export class RestRateLimits {
  private readonly authByIp = new SlidingWindowLog(MINUTE);
  private readonly oauthByIp = new SlidingWindowLog(MINUTE);
  private readonly failuresByEmail: SlidingWindowLog;
  private readonly byUser = new SlidingWindowLog(MINUTE);

  constructor(
    private readonly limits: RestLimits,
    private readonly clock: Clock,
  ) {
    this.failuresByEmail = new SlidingWindowLog(limits.authFailureWindowMs);
  }

  /** Counts one login/register attempt from `ip`; throws 429 past the limit. */
  admitAuthAttempt(ip: string): RateLimitHeaders {
    return this.admitFrom(this.authByIp, this.limits.authPerIpPerMinute, ip);
  }

  /**
   * Counts one call from `ip` to the OAuth server's endpoints that anyone may call (dynamic
   * registration, tokens, revocation); throws 429 past the limit. Its own budget: assistants
   * refreshing their tokens behind a clinic's one address must not lock its staff out of login.
   */
  admitOAuthCall(ip: string): RateLimitHeaders {
    return this.admitFrom(this.oauthByIp, this.limits.oauthPerIpPerMinute, ip);
  }

  private admitFrom(log: SlidingWindowLog, limit: number, ip: string): RateLimitHeaders {
    const decision = log.tryConsume(ip, limit, this.clock.now().getTime());
    const headers = headersOf(limit, decision.remaining, decision.resetAtMs);
    if (!decision.allowed) throw tooMany("TOO_MANY_ATTEMPTS", "Too many attempts; try again later", decision.retryAfterMs, headers);
    return headers;
  }

  /** Refuses an email that has failed too often recently, even with the right password. */
  assertEmailNotLocked(email: string): void {
    const limit = this.limits.authFailuresPerEmail;
    const decision = this.failuresByEmail.peek(email, limit, this.clock.now().getTime());
    if (!decision.allowed) {
      throw tooMany("TOO_MANY_ATTEMPTS", "Too many failed attempts for this account; try again later", decision.retryAfterMs, headersOf(limit, 0, decision.resetAtMs));
    }
  }

  recordFailure(email: string): void {
    this.failuresByEmail.record(email, this.clock.now().getTime());
  }

  /** Counts one authenticated REST call; throws 429 past the per-user limit. */
  admitUserCall(userId: string): RateLimitHeaders {
    const limit = this.limits.perUserPerMinute;
    const now = this.clock.now().getTime();
    const decision = this.byUser.tryConsume(userId, limit, now);
    const headers = headersOf(limit, decision.remaining, decision.allowed ? now + MINUTE : decision.resetAtMs);
    if (!decision.allowed) throw tooMany("RATE_LIMIT_EXCEEDED", "Too many requests; slow down", decision.retryAfterMs, headers);
    return headers;
  }
}
