import { and, eq } from "drizzle-orm";
import type { Database, Subscription } from "../../db/client";
import { silentLogger, type Logger } from "../../lib/logger";
import { apiKeys, clinics, oauthConnections, oauthTokens, type ApiKeyScope, type Plan } from "../../db/schema";
import type { Clock } from "../../lib/clock";
import { randomAlphanumeric, sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";

export const API_KEY_PATTERN = /^svc_[A-Za-z0-9]{32}$/;
/** An OAuth access token of an approved connection (opaque; only its digest is stored). */
export const ACCESS_TOKEN_PATTERN = /^mat_[A-Za-z0-9]{40}$/;
export const KEY_CHANGES_CHANNEL = "vet_api_key_changes";

/** Burst cap per plan (interface spec, Limits); enterprise clinics carry their own. */
export const PLAN_BURST_PER_MINUTE: Record<Exclude<Plan, "enterprise">, number> = { standard: 60, pro: 200 };
const ENTERPRISE_DEFAULT_BURST = 600;

export function burstFor(plan: Plan, clinicBurst: number | null): number {
  return plan === "enterprise" ? (clinicBurst ?? ENTERPRISE_DEFAULT_BURST) : PLAN_BURST_PER_MINUTE[plan];
}

export function generateApiKey(): { value: string; hash: string; prefix: string } {
  const value = `svc_${randomAlphanumeric(32)}`;
  return { value, hash: sha256Hex(value), prefix: value.slice(0, 8) };
}

/** A refused key, with RFC 6750's `invalid_token` and the reason in WWW-Authenticate for MCP clients. */
function keyRefused(code: "INVALID_API_KEY" | "API_KEY_REVOKED" | "API_KEY_EXPIRED", message: string): AppError {
  return new AppError(code, message, undefined, { "www-authenticate": `Bearer error="invalid_token", error_description="${message}"` });
}

/** A refused OAuth access token, with RFC 6750's `invalid_token`. */
function tokenRefused(code: "INVALID_TOKEN" | "TOKEN_EXPIRED", message: string): AppError {
  return new AppError(code, message, undefined, { "www-authenticate": `Bearer error="invalid_token", error_description="${message}"` });
}

/**
 * What a call needs to know about its caller, an API key or an approved OAuth connection (whose
 * `id` is the connection's, and `expiresAt` its access token's); cached in process.
 */
export interface KeyPrincipal {
  id: string;
  kind: "key" | "connection";
  clinicId: string;
  scopes: ApiKeyScope[];
  rateLimitPerDay: number;
  burstPerMinute: number;
  expiresAt: Date | null;
  revokedAt: Date | null;
  clinicTimezone: string;
  clinicCurrency: string;
}

/** Safety net if an eviction notice is ever missed while notices are trusted. */
const CACHE_TTL_MS = 60_000;
/** How long a cached key lives while eviction notices cannot be relied on: a revoked or rotated key stops within it everywhere. */
export const EXPIRING_CACHE_TTL_MS = 1_000;
/** How often the listener checks that its own notices still come back (a pooler may be put in front of a running service). */
export const NOTICE_PROBE_INTERVAL_MS = 15_000;
/** How long a probe notice may take to come back (a loaded server or pooler can take a while). */
const NOTICE_PROBE_WAIT_MS = 2_000;

/**
 * How a key change reaches the other instances: "notify" when this instance hears its own
 * notices (cached keys live up to a minute, evicted by NOTIFY); "expiring" otherwise (the
 * listener is down, or LISTEN goes through a transaction-mode pooler, which delivers nothing),
 * where a cached key lives at most a second.
 */
export type KeyRevocationMode = "notify" | "expiring";

/**
 * Authenticates API keys with an in-process cache keyed by the key's digest. Rotation and
 * revocation evict locally in the same request and, through NOTIFY, on every instance that
 * shares the database; where notices do not arrive, entries expire within a second instead.
 */
export class ApiKeyDirectory {
  private readonly byHash = new Map<string, { principal: KeyPrincipal; cachedAt: number }>();
  /** A key has one digest; a connection one per live access token. */
  private readonly hashesById = new Map<string, Set<string>>();
  /**
   * Counts evictions and clears. A key read while one happened may be the row as it was before
   * the change that caused it (the read started first): it is answered from, but not cached.
   */
  private evictions = 0;
  private subscription: Subscription | undefined;
  /** The listener's connection is up and subscribed. */
  private subscribed = false;
  /** The listener's connection reaches the server itself, not a pooler (only then are all notices delivered to it). */
  private listenerDirect = false;
  /**
   * Notices are trusted only from a probe that came back until the listener is lost or a later
   * probe does not come back. Each change of trust empties the cache, so an entry is never
   * older than the current trust.
   */
  private heard = false;
  private judged = false;
  private readonly echoWaiters = new Map<string, () => void>();
  private listeningWaiters: (() => void)[] = [];
  private probeTimer: ReturnType<typeof setInterval> | undefined;
  private probing: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly logger: Logger = silentLogger,
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.database.listen(KEY_CHANGES_CHANNEL, {
      onMessage: (payload) => {
        const [keyId, nonce] = payload.split(":");
        if (keyId) this.evictLocal(keyId);
        if (nonce) this.echoWaiters.get(nonce)?.();
      },
      onSubscribed: (direct) => {
        // Anything announced while disconnected is unknown, so start afresh.
        this.clearCache();
        this.subscribed = true;
        this.listenerDirect = direct;
        void this.probe();
      },
      onDisconnected: () => {
        this.subscribed = false;
        this.trust(false, "key change listener disconnected");
      },
    });
    this.probeTimer = setInterval(() => void this.probe(), NOTICE_PROBE_INTERVAL_MS);
    this.probeTimer.unref?.();
    if (!this.subscribed) this.trust(false, "the key change listener could not subscribe yet; it keeps trying");
    await this.probing;
  }

  /**
   * Sends a notice that names no key and waits for it to come back to this instance's
   * listener. Notices are trusted only on a listener connected to the server itself: through a
   * transaction-mode pooler LISTEN is accepted, and a notice now and then reaches the listener
   * by chance (when it is sent while the listener runs a statement on the server that listens),
   * but most are lost.
   */
  probe(): Promise<void> {
    this.probing ??= (async () => {
      if (!this.subscribed) return;
      if (!this.listenerDirect) {
        this.trust(false, "the key change listener reaches the database through a connection pooler, which does not deliver every notice (set DATABASE_DIRECT_URL to a direct connection)");
        return;
      }
      let heard = false;
      try {
        heard = await this.announce("");
      } catch {
        // The database is away: the listener's own loss will say so.
        return;
      }
      if (heard) this.database.confirmSession();
      this.trust(heard && this.subscribed, heard ? "key change listener subscribed" : `this instance's own NOTIFY did not come back within ${NOTICE_PROBE_WAIT_MS} ms (a transaction-mode pooler? set DATABASE_DIRECT_URL)`);
    })().finally(() => (this.probing = undefined));
    return this.probing;
  }

  private trust(heard: boolean, reason: string): void {
    // The first verdict is logged either way: an operator learns at start which mode is in force.
    if (heard === this.heard && this.judged) return;
    this.judged = true;
    this.heard = heard;
    this.clearCache();
    if (heard) {
      this.logger.info("api key cache on: key changes arrive by NOTIFY", { reason });
      for (const resolve of this.listeningWaiters.splice(0)) resolve();
    } else {
      this.logger.warn(`api key cache off: cached keys live at most ${EXPIRING_CACHE_TTL_MS} ms`, { reason });
    }
  }

  /** How key changes reach this instance now. */
  get revocationMode(): KeyRevocationMode {
    return this.heard ? "notify" : "expiring";
  }

  /** Whether keys may be cached for long (key changes arrive by NOTIFY). */
  get cacheActive(): boolean {
    return this.heard;
  }

  /** The listening connection's name (PostgreSQL application_name). */
  get listenerName(): string | undefined {
    return this.subscription?.connectionName;
  }

  /** Resolves when notices are heard (at once if they are). */
  whenListening(): Promise<void> {
    if (this.heard) return Promise.resolve();
    return new Promise((resolve) => this.listeningWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.subscribed = false;
    this.heard = false;
    if (this.probeTimer) clearInterval(this.probeTimer);
    await this.subscription?.stop().catch(() => {});
  }

  private clearCache(): void {
    this.evictions++;
    this.byHash.clear();
    this.hashesById.clear();
  }

  /** Resolves a Bearer value to its key or connection, or throws the contract's 401. */
  async authenticate(authorization: string | null): Promise<KeyPrincipal> {
    if (!authorization) throw new AppError("AUTH_REQUIRED", "This endpoint needs the clinic's MCP API key (Authorization: Bearer svc_…) or an OAuth access token");
    const value = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    const kind = value && API_KEY_PATTERN.test(value) ? "key" : value && ACCESS_TOKEN_PATTERN.test(value) ? "connection" : undefined;
    // A malformed value never reaches the database.
    if (!value || !kind) throw keyRefused("INVALID_API_KEY", "The API key is not valid");
    const hash = sha256Hex(value);
    const now = this.clock.now();
    let entry = this.byHash.get(hash);
    const ttl = this.heard ? CACHE_TTL_MS : EXPIRING_CACHE_TTL_MS;
    if (!entry || now.getTime() - entry.cachedAt >= ttl) {
      const trustedBefore = this.heard;
      const evictionsBefore = this.evictions;
      const principal = kind === "key" ? await this.loadKey(hash) : await this.loadConnection(hash);
      if (!principal) throw kind === "key" ? keyRefused("INVALID_API_KEY", "The API key is not valid") : tokenRefused("INVALID_TOKEN", "The access token is not valid");
      entry = { principal, cachedAt: now.getTime() };
      // Read under one trust with no eviction meanwhile, or not kept: a change of trust emptied the
      // cache, and an eviction may be for this very key, read before its change committed.
      if (trustedBefore === this.heard && evictionsBefore === this.evictions) {
        this.byHash.set(hash, entry);
        const hashes = this.hashesById.get(principal.id) ?? new Set<string>();
        hashes.add(hash);
        this.hashesById.set(principal.id, hashes);
      }
    }
    const { principal } = entry;
    if (principal.kind === "connection") {
      if (principal.revokedAt) throw tokenRefused("INVALID_TOKEN", "The connection has been ended by the clinic's owner");
      if (principal.expiresAt && principal.expiresAt <= now) throw tokenRefused("TOKEN_EXPIRED", "The access token has expired");
      return principal;
    }
    if (principal.revokedAt) throw keyRefused("API_KEY_REVOKED", "The API key has been revoked");
    if (principal.expiresAt && principal.expiresAt <= now) throw keyRefused("API_KEY_EXPIRED", "The API key has expired");
    return principal;
  }

  /**
   * Evicts a changed key here at once and on every other instance. Waits (briefly) for its own
   * notice to come back: PostgreSQL delivers it to every listener at commit, so by then the
   * other instances have it too.
   */
  async keyChanged(keyId: string): Promise<void> {
    this.evictLocal(keyId);
    // Through a pooler the other instances' entries expire by themselves: nothing to wait for. On a
    // direct listener the notice is waited for even before a probe has come back (a loaded server
    // can be slow to answer the first): the other instances evict on it, trusted or not.
    if (this.subscribed && this.listenerDirect) await this.announce(keyId).catch(() => false);
    else await this.database.notify(KEY_CHANGES_CHANNEL, `${keyId}:`).catch(() => {});
  }

  /** Notifies `keyId` (empty: a probe) and resolves whether the notice came back within the wait. */
  private async announce(keyId: string): Promise<boolean> {
    const nonce = Bun.randomUUIDv7();
    const echoed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), NOTICE_PROBE_WAIT_MS);
      this.echoWaiters.set(nonce, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    try {
      await this.database.notify(KEY_CHANGES_CHANNEL, `${keyId}:${nonce}`);
      return await echoed;
    } finally {
      this.echoWaiters.delete(nonce);
    }
  }

  evictLocal(keyId: string): void {
    this.evictions++;
    for (const hash of this.hashesById.get(keyId) ?? []) this.byHash.delete(hash);
    this.hashesById.delete(keyId);
  }

  private async loadConnection(hash: string): Promise<KeyPrincipal | undefined> {
    const [row] = await this.database.db
      .select({ connection: oauthConnections, expiresAt: oauthTokens.expires_at, plan: clinics.plan, clinicBurst: clinics.burst_per_minute, timezone: clinics.timezone, currency: clinics.currency })
      .from(oauthTokens)
      .innerJoin(oauthConnections, eq(oauthConnections.id, oauthTokens.connection_id))
      .innerJoin(clinics, eq(clinics.id, oauthConnections.clinic_id))
      .where(and(eq(oauthTokens.token_hash, hash), eq(oauthTokens.kind, "access")))
      .limit(1);
    if (!row) return undefined;
    return {
      id: row.connection.id,
      kind: "connection",
      clinicId: row.connection.clinic_id,
      scopes: row.connection.scopes,
      rateLimitPerDay: row.connection.rate_limit_per_day,
      burstPerMinute: burstFor(row.plan, row.clinicBurst),
      expiresAt: row.expiresAt,
      revokedAt: row.connection.revoked_at,
      clinicTimezone: row.timezone,
      clinicCurrency: row.currency,
    };
  }

  private async loadKey(hash: string): Promise<KeyPrincipal | undefined> {
    const [row] = await this.database.db
      .select({ key: apiKeys, plan: clinics.plan, clinicBurst: clinics.burst_per_minute, timezone: clinics.timezone, currency: clinics.currency })
      .from(apiKeys)
      .innerJoin(clinics, eq(clinics.id, apiKeys.clinic_id))
      .where(and(eq(apiKeys.key_hash, hash)))
      .limit(1);
    if (!row) return undefined;
    return {
      id: row.key.id,
      kind: "key",
      clinicId: row.key.clinic_id,
      scopes: row.key.scopes,
      rateLimitPerDay: row.key.rate_limit_per_day,
      burstPerMinute: burstFor(row.plan, row.clinicBurst),
      expiresAt: row.key.expires_at,
      revokedAt: row.key.revoked_at,
      clinicTimezone: row.timezone,
      clinicCurrency: row.currency,
    };
  }
}
