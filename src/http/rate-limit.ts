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

  /**
   * The caller's address: the listener's peer, or, when that peer is a trusted proxy, the nearest
   * address in `X-Forwarded-For` that is not one (anyone else's header is ignored).
   */
  clientIp(server: Listener, request: Request): string {
    const peer = clientIp(server, request);
    if (!this.trusts(peer)) return peer;
    const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").map((hop) => hop.trim()).filter((hop) => ipaddr.isValid(hop));
    for (let i = hops.length - 1; i >= 0; i--) if (!this.trusts(hops[i]!)) return parsedAddress(hops[i]!)!.toString();
    return peer;
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

const loginKey = (email: string, ip: string) => `${email}\u0000${ip}`;
/** The (email, address) pairs remembered at most; past it the quietest are forgotten. */
const MAX_LOGIN_PAIRS = 100_000;

/**
 * REST rate limits, in process (each instance counts its own traffic):
 * login/register per IP, failed logins per (email, IP), the OAuth server's open endpoints per IP,
 * and every other call per user.
 */
export class RestRateLimits {
  private readonly authByIp = new SlidingWindowLog(MINUTE);
  private readonly oauthByIp = new SlidingWindowLog(MINUTE);
  private readonly loginFailures = new Map<string, { count: number; lastAt: number }>();
  private readonly byUser = new SlidingWindowLog(MINUTE);
  private readonly publicByIp = new SlidingWindowLog(MINUTE);
  private readonly publicByClinic = new SlidingWindowLog(MINUTE);

  constructor(
    private readonly limits: RestLimits,
    private readonly clock: Clock,
  ) {}

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

  /**
   * Login throttling per (email, address): after `loginFailuresBeforeDelay` failures, each
   * further attempt from that address for that email waits 1 s, then 2 s, 4 s… up to
   * `loginMaxDelayMs` after the last failure. Guessing is slowed where it comes from; an attack
   * from elsewhere never locks the owner out of their own sign-in from their usual address.
   */
  assertLoginAllowed(email: string, ip: string): void {
    const now = this.clock.now().getTime();
    const entry = this.currentFailures(email, ip, now);
    if (!entry) return;
    const readyAt = entry.lastAt + this.delayAfter(entry.count);
    if (now < readyAt) {
      throw tooMany("TOO_MANY_ATTEMPTS", "Too many failed attempts for this account from your address; wait before trying again", readyAt - now, headersOf(this.limits.loginFailuresBeforeDelay, 0, readyAt));
    }
  }

  recordLoginFailure(email: string, ip: string): void {
    const now = this.clock.now().getTime();
    const key = loginKey(email, ip);
    const count = (this.currentFailures(email, ip, now)?.count ?? 0) + 1;
    this.loginFailures.delete(key); // re-inserted last: the map's order is oldest first
    this.loginFailures.set(key, { count, lastAt: now });
    // Bounded: the pairs quiet the longest go first.
    for (const [oldest] of this.loginFailures) {
      if (this.loginFailures.size <= MAX_LOGIN_PAIRS) break;
      this.loginFailures.delete(oldest);
    }
  }

  /** A sign-in that succeeded clears its pair's failures. */
  recordLoginSuccess(email: string, ip: string): void {
    this.loginFailures.delete(loginKey(email, ip));
  }

  private currentFailures(email: string, ip: string, now: number) {
    const key = loginKey(email, ip);
    const entry = this.loginFailures.get(key);
    if (entry && now - entry.lastAt >= this.limits.loginMaxDelayMs) {
      this.loginFailures.delete(key);
      return undefined;
    }
    return entry;
  }

  private delayAfter(failures: number): number {
    const over = failures - this.limits.loginFailuresBeforeDelay;
    if (over < 0) return 0;
    return Math.min(1000 * 2 ** Math.min(over, 30), this.limits.loginMaxDelayMs);
  }

  /**
   * Counts one call to online booking's public routes, from `ip` and for the clinic `clinicKey`;
   * throws 429 past either limit (the clinic's budget keeps one clinic's page from being flooded
   * from many addresses). A call refused by one limit is not counted by the other.
   */
  admitPublicCall(ip: string, clinicKey: string): RateLimitHeaders {
    const now = this.clock.now().getTime();
    const byIp = this.publicByIp.peek(ip, this.limits.publicPerIpPerMinute, now);
    const byClinic = this.publicByClinic.peek(clinicKey, this.limits.publicPerClinicPerMinute, now);
    const [limit, decision] = !byIp.allowed ? [this.limits.publicPerIpPerMinute, byIp] : !byClinic.allowed ? [this.limits.publicPerClinicPerMinute, byClinic] : [this.limits.publicPerIpPerMinute, byIp];
    if (!decision.allowed) throw tooMany("RATE_LIMIT_EXCEEDED", "Too many requests; try again in a moment", decision.retryAfterMs, headersOf(limit, 0, decision.resetAtMs));
    this.publicByIp.record(ip, now);
    this.publicByClinic.record(clinicKey, now);
    return headersOf(limit, byIp.remaining - 1, byIp.resetAtMs > now ? byIp.resetAtMs : now + MINUTE);
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
