import ipaddr from "ipaddr.js";
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

type Listener = { requestIP(r: Request): { address: string } | null } | null;

const parsedAddress = (address: string): ipaddr.IPv4 | ipaddr.IPv6 | null => {
  if (!ipaddr.isValid(address)) return null;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
};

/**
 * The reverse proxies in front of the service (TRUSTED_PROXIES: IPs or CIDRs). Only a request
 * that reached the service from one of them may say, in `X-Forwarded-Proto`, that the browser
 * spoke https; anyone else's header is ignored.
 */
export class TrustedProxies {
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(entries: readonly string[]) {
    this.ranges = entries.map((entry) => {
      try {
        return entry.includes("/") ? ipaddr.parseCIDR(entry) : ([parsedAddress(entry)!, parsedAddress(entry)!.kind() === "ipv4" ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]);
      } catch {
        throw new Error(`TRUSTED_PROXIES must be a comma list of IP addresses or CIDRs such as 10.0.0.1,172.16.0.0/12 (got "${entry}")`);
      }
    });
  }

  trusts(address: string): boolean {
    const parsed = parsedAddress(address);
    return !!parsed && this.ranges.some(([range, bits]) => range.kind() === parsed.kind() && parsed.match(range, bits));
  }

  /** Whether the browser reached the service over https: directly, or through a trusted proxy that says so. */
  isHttps(server: Listener, request: Request): boolean {
    if (new URL(request.url).protocol === "https:") return true;
    const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    return forwarded === "https" && this.trusts(clientIp(server, request));
  }
}

/** Whether a listener on `host` can be reached only from this machine. */
export function isLoopbackHost(host: string): boolean {
  if (host === "localhost") return true;
  const parsed = parsedAddress(host.replace(/^\[|\]$/g, ""));
  return !!parsed && parsed.range() === "loopback";
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
