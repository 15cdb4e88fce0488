import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BackupSettings } from "./backup/store";
import type { PoolSizes } from "./db/client";
import type { LogLevel } from "./lib/logger";

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** A direct (session) connection to DATABASE_URL's database, when DATABASE_URL is a transaction-mode pooler. */
  databaseDirectUrl?: string | undefined;
  dataDir: string;
  jwtSecret: string;
  /** Encrypts the secrets kept in the database (CAF private keys, the SII certificate's key). */
  secretsKey: string;
  /** Where SECRETS_KEY comes from, for messages: the environment, or the file in DATA_DIR. */
  secretsKeySource?: string;
  /** A PEM file of extra public keys trusted for CAF signatures (tests and development): their CAFs issue `environment: "test"` documents. */
  siiTestCafKeysFile: string | null;
  /** Whether the refresh cookie is `Secure`: "auto" follows the request's scheme (https directly, or from a trusted proxy). */
  cookieSecure: CookieSecure;
  /** Proxies whose `X-Forwarded-Proto` and `X-Forwarded-For` are believed (IPs or CIDRs, TRUSTED_PROXIES). */
  trustedProxies: string[];
  /** Who may open a clinic through POST /auth/register (REGISTRATION). */
  registration: RegistrationPolicy;
  quotaFlushMs: number;
  queryTimeoutMs: number;
  queryMaxRows: number;
  /** Largest planner cost `query_database` runs on the embedded database (no working statement_timeout there). */
  queryMaxCost: number;
  logLevel: LogLevel;
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number;
  limits: RestLimits;
  /**
   * The service's public origin (PUBLIC_URL, no path): the OAuth issuer and the MCP resource
   * `{publicUrl}/mcp`. Unset, it is the origin the request reached (the listener's URL).
   */
  publicUrl?: string;
  /** Browser origins allowed to call POST /mcp besides the server's own. */
  mcpAllowedOrigins: string[];
  /** Browser origins allowed to call the REST API across origins (CORS, credentials included). */
  corsOrigins: string[];
  /** Backups of the embedded database (a PostgreSQL server's are its operator's job). */
  backup: BackupSettings;
  /** PostgreSQL connections per instance: the service's own, and query_database's. */
  poolSizes: PoolSizes;
  /** Resident memory above which the served process runs a full collection (0: never). */
  memorySoftLimitMb: number;
  webhooks: WebhookSettings;
  /** Absent: no channel, nothing dispatched (what a test that does not send reminders gets). */
  reminders?: ReminderSettings;
}

/** Reminders to tutors (REMINDER_*, SMTP_*, MAIL_FROM, WHATSAPP_*); a channel without its settings is absent. */
export interface ReminderSettings {
  /** Whether this instance plans and sends reminders (REMINDER_DISPATCHER=off leaves it to others; tests drive it by hand). */
  dispatch: boolean;
  /** The delay before each retry of a failed send (REMINDER_RETRY_SCHEDULE); after the last, the message is `failed`. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** SMTP_URL (smtp:// or smtps://, credentials in the URL) and MAIL_FROM; null: no e-mail. */
  email: { smtpUrl: string; from: string } | null;
  /** WhatsApp Cloud API; null: no WhatsApp. */
  whatsapp: WhatsAppSettings | null;
}

export interface WhatsAppSettings {
  token: string;
  phoneNumberId: string;
  /** Meta's Graph API base with its version, or a provider that speaks the same API (WHATSAPP_API_URL). */
  apiUrl: string;
  /** Verifies X-Hub-Signature-256 on the inbound webhook; without it the webhook refuses everything. */
  appSecret: string | null;
  /** What Meta's verification handshake must present (hub.verify_token). */
  verifyToken: string | null;
}

/** No channel configured, nothing dispatched. */
export const NO_REMINDERS: ReminderSettings = { dispatch: false, retryScheduleMs: [60_000], timeoutMs: 15_000, email: null, whatsapp: null };

/** Meta's Graph API, at the version the request shapes were checked against. */
export const DEFAULT_WHATSAPP_API_URL = "https://graph.facebook.com/v23.0";
/** Retries of a reminder: 1 min, 5 min, 30 min, 2 h, 6 h; then it is `failed` (within about nine hours). */
export const DEFAULT_REMINDER_RETRY_SCHEDULE = "1m,5m,30m,2h,6h";

/** The reminder settings from the environment; a half-configured channel is a start-up error that names what is missing. */
export function reminderSettingsFrom(env: Env): ReminderSettings {
  let email: ReminderSettings["email"] = null;
  if (env.SMTP_URL) {
    const url = URL.parse(env.SMTP_URL);
    if (!url || (url.protocol !== "smtp:" && url.protocol !== "smtps:")) throw new Error("SMTP_URL must be smtp://user:password@host:port or smtps://… (got a value that is neither)");
    if (!env.MAIL_FROM) throw new Error("MAIL_FROM is required with SMTP_URL (the address reminders come from, such as \"Clínica <avisos@clinica.cl>\")");
    email = { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM };
  }
  let whatsapp: ReminderSettings["whatsapp"] = null;
  if (env.WHATSAPP_TOKEN || env.WHATSAPP_PHONE_NUMBER_ID) {
    if (!env.WHATSAPP_TOKEN || !env.WHATSAPP_PHONE_NUMBER_ID) throw new Error("WhatsApp needs both WHATSAPP_TOKEN and WHATSAPP_PHONE_NUMBER_ID");
    const apiUrl = (env.WHATSAPP_API_URL || DEFAULT_WHATSAPP_API_URL).replace(/\/+$/, "");
    const parsed = URL.parse(apiUrl);
    if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) throw new Error(`WHATSAPP_API_URL must be an http(s) URL such as ${DEFAULT_WHATSAPP_API_URL}`);
    whatsapp = { token: env.WHATSAPP_TOKEN, phoneNumberId: env.WHATSAPP_PHONE_NUMBER_ID, apiUrl, appSecret: env.WHATSAPP_APP_SECRET || null, verifyToken: env.WHATSAPP_VERIFY_TOKEN || null };
  }
  return {
    dispatch: env.REMINDER_DISPATCHER !== "off",
    retryScheduleMs: retryScheduleFrom(env.REMINDER_RETRY_SCHEDULE || DEFAULT_REMINDER_RETRY_SCHEDULE, "REMINDER_RETRY_SCHEDULE"),
    timeoutMs: intFrom(env, "REMINDER_TIMEOUT_MS", 15_000, 100),
    email,
    whatsapp,
  };
}

export type CookieSecure = "auto" | boolean;
export type RegistrationPolicy = "closed" | "open" | "invite";

/** REGISTRATION: `closed` (default: clinics come from the setup link, create-owner or the demo), `open`, or `invite`. */
export function registrationFrom(raw: string | undefined): RegistrationPolicy {
  const value = (raw ?? "").trim().toLowerCase() || "closed";
  if (value !== "closed" && value !== "open" && value !== "invite") throw new Error(`REGISTRATION must be closed, open or invite (got "${raw}")`);
  return value;
}

/** COOKIE_SECURE: `auto` (default), `true` or `false`. */
export function cookieSecureFrom(raw: string | undefined): CookieSecure {
  const value = (raw ?? "").trim().toLowerCase() || "auto";
  if (value === "auto") return "auto";
  if (value === "true") return true;
  if (value === "false") return false;
  throw new Error(`COOKIE_SECURE must be auto, true or false (got "${raw}")`);
}

/** Webhook delivery (WEBHOOK_* settings). */
export interface WebhookSettings {
  /** Whether this instance delivers (WEBHOOK_DISPATCHER=off leaves it to others; tests drive it by hand). */
  dispatch: boolean;
  /** The delay before the first attempt, then the wait after each failure (WEBHOOK_RETRY_SCHEDULE). */
  retryScheduleMs: number[];
  /** CIDRs a webhook URL may reach although private, loopback or link-local (WEBHOOK_ALLOWED_NETWORKS). */
  allowedNetworks: string[];
  /** Plain http URLs are accepted only outside production. */
  allowHttp: boolean;
  timeoutMs: number;
  /** Webhooks one clinic may have (WEBHOOK_MAX_ENDPOINTS, default 20). */
  maxEndpoints?: number;
  /** Time-based events (`vaccination.due`, `alert.due`): for what falls due within this many days (WEBHOOK_DUE_DAYS)… */
  dueDays: number;
  /** …written each day from this hour in the clinic's time zone (WEBHOOK_DUE_HOUR). */
  dueHour: number;
  /** Events older than this many days are deleted daily with their finished deliveries (EVENTS_RETENTION_DAYS); unset: kept forever. */
  eventsRetentionDays?: number | null;
}

export const DEFAULT_WEBHOOK_MAX_ENDPOINTS = 20;

/** The Standard Webhooks schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_RETRY_SCHEDULE = "0s,5s,5m,30m,2h,5h,10h,14h,20h,24h";
const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** WEBHOOK_RETRY_SCHEDULE: a comma list of durations (`0s,5s,5m`), each a whole number with ms, s, m, h or d. */
export function retryScheduleFrom(raw: string | undefined, name = "WEBHOOK_RETRY_SCHEDULE"): number[] {
  const items = (raw || DEFAULT_RETRY_SCHEDULE).split(",").map((item) => item.trim());
  return items.map((item) => {
    const match = /^(\d+)(ms|s|m|h|d)$/.exec(item);
    if (!match) throw new Error(`${name} must be a comma list of durations such as 0s,5s,5m,30m,2h (got "${raw}")`);
    return Number(match[1]) * DURATION_UNIT_MS[match[2]!]!;
  });
}

/** The REST rate limits; tests lower or raise them. */
export interface RestLimits {
  authPerIpPerMinute: number;
  /** Failed logins for one email from one address before each further attempt has to wait. */
  loginFailuresBeforeDelay: number;
  /** The longest wait (the delay doubles from a second with each further failure); a pair quiet this long is forgotten. */
  loginMaxDelayMs: number;
  perUserPerMinute: number;
  /** The OAuth server's open endpoints (registration, tokens, revocation), per IP. */
  oauthPerIpPerMinute: number;
  /** Online booking's public routes (/api/v1/public/clinics/…, /api/v1/public/bookings/…), per IP. */
  publicPerIpPerMinute: number;
  /** The same routes, per clinic (each instance counts its own traffic). */
  publicPerClinicPerMinute: number;
}

export const DEFAULT_LIMITS: RestLimits = {
  authPerIpPerMinute: 10,
  loginFailuresBeforeDelay: 5,
  loginMaxDelayMs: 15 * 60 * 1000,
  perUserPerMinute: 600,
  oauthPerIpPerMinute: 30,
  publicPerIpPerMinute: 60,
  publicPerClinicPerMinute: 600,
};

type Env = Record<string, string | undefined>;

function intFrom(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min} (got "${raw}")`);
  return value;
}

/**
 * JWT_SECRET: at least 32 bytes; required in production; otherwise generated once
 * and kept in DATA_DIR with mode 0600 so restarts keep sessions.
 */
export function resolveJwtSecret(env: Env, dataDir: string): string {
  return resolveSecret(env, dataDir, "JWT_SECRET", "jwt-secret");
}

/**
 * SECRETS_KEY: the key (at least 32 bytes) the database's secrets are encrypted with; the same
 * rule as JWT_SECRET (required in production, else generated once into DATA_DIR/secrets-key).
 * Losing it makes the stored CAF keys and certificate unusable: they must be uploaded again.
 */
export function resolveSecretsKey(env: Env, dataDir: string): string {
  return resolveSecret(env, dataDir, "SECRETS_KEY", "secrets-key");
}

function resolveSecret(env: Env, dataDir: string, name: string, fileName: string): string {
  const given = env[name];
  if (given !== undefined && given !== "") {
    if (Buffer.byteLength(given) < 32) throw new Error(`${name} must be at least 32 bytes`);
    return given;
  }
  if (env.NODE_ENV === "production") throw new Error(`${name} is required when NODE_ENV=production`);
  const file = join(dataDir, fileName);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url");
  writeFileSync(file, secret + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

const INTERVAL_WORDS: Record<string, number> = { hourly: 3_600_000, daily: 86_400_000, weekly: 7 * 86_400_000 };
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** BACKUP_INTERVAL: `off`, `hourly`, `daily` (default), `weekly`, or a number with m, h or d (`6h`); at least a minute. */
export function backupIntervalFrom(raw: string | undefined): number | null {
  const value = (raw ?? "daily").trim().toLowerCase();
  if (value === "off") return null;
  if (INTERVAL_WORDS[value]) return INTERVAL_WORDS[value];
  const match = /^(\d+)\s*([mhd])$/.exec(value);
  if (!match || Number(match[1]) < 1) throw new Error(`BACKUP_INTERVAL must be off, hourly, daily, weekly or a number with m, h or d such as 6h (got "${raw}")`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** PUBLIC_URL: an http(s) origin such as https://clinic.example.com (a trailing slash is dropped). */
export function publicUrlFrom(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  const url = URL.parse(value);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || (url.pathname !== "/" && url.pathname !== "") || url.search || url.hash || url.username) {
    throw new Error(`PUBLIC_URL must be an http(s) origin such as https://clinic.example.com, without a path (got "${raw}")`);
  }
  return url.origin;
}

const listFrom = (raw: string | undefined) => (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean);

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(env.DATA_DIR || "./data");
  const level = (env.LOG_LEVEL || "info") as LogLevel;
  if (!["debug", "info", "warn", "error", "silent"].includes(level)) throw new Error(`LOG_LEVEL "${level}" is unknown`);
  if (env.NODE_ENV === "production" && !env.SECRETS_KEY) throw new Error("SECRETS_KEY is required when NODE_ENV=production");
  // Every absolute URL the service builds (OAuth metadata, the setup link) comes from it, never from a request's Host.
  if (env.NODE_ENV === "production" && !env.PUBLIC_URL?.trim()) throw new Error("PUBLIC_URL is required when NODE_ENV=production (the service's public origin, such as https://clinic.example.com)");
  return {
    port: intFrom(env, "PORT", 3000),
    host: env.HOST || "0.0.0.0",
    databaseUrl: env.DATABASE_URL || undefined,
    databaseDirectUrl: env.DATABASE_DIRECT_URL || undefined,
    dataDir,
    jwtSecret: resolveJwtSecret(env, dataDir),
    // Read or generated on first use, so commands that never touch the secrets write no key file.
    get secretsKey() {
      const value = resolveSecretsKey(env, dataDir);
      Object.defineProperty(this, "secretsKey", { value, enumerable: true });
      return value;
    },
    secretsKeySource: env.SECRETS_KEY ? "SECRETS_KEY (the environment)" : `DATA_DIR/secrets-key (${join(dataDir, "secrets-key")})`,
    siiTestCafKeysFile: env.SII_TEST_CAF_KEYS ? resolve(env.SII_TEST_CAF_KEYS) : null,
    cookieSecure: cookieSecureFrom(env.COOKIE_SECURE),
    trustedProxies: listFrom(env.TRUSTED_PROXIES),
    registration: registrationFrom(env.REGISTRATION),
    quotaFlushMs: intFrom(env, "QUOTA_FLUSH_MS", 2000, 10),
    queryTimeoutMs: intFrom(env, "QUERY_TIMEOUT_MS", 5000, 1),
    queryMaxRows: intFrom(env, "QUERY_MAX_ROWS", 1000, 1),
    queryMaxCost: intFrom(env, "QUERY_MAX_COST", 1_000_000, 1),
    logLevel: level,
    maxBodyBytes: intFrom(env, "MAX_BODY_BYTES", 1024 * 1024, 1024),
    limits: { ...DEFAULT_LIMITS },
    publicUrl: publicUrlFrom(env.PUBLIC_URL),
    mcpAllowedOrigins: listFrom(env.MCP_ALLOWED_ORIGINS),
    corsOrigins: listFrom(env.CORS_ORIGINS),
    poolSizes: { main: intFrom(env, "DATABASE_POOL_SIZE", 10, 1), query: intFrom(env, "QUERY_POOL_SIZE", 4, 1) },
    memorySoftLimitMb: intFrom(env, "MEMORY_SOFT_LIMIT_MB", 384),
    webhooks: {
      dispatch: env.WEBHOOK_DISPATCHER !== "off",
      retryScheduleMs: retryScheduleFrom(env.WEBHOOK_RETRY_SCHEDULE),
      allowedNetworks: listFrom(env.WEBHOOK_ALLOWED_NETWORKS),
      allowHttp: env.NODE_ENV !== "production",
      timeoutMs: intFrom(env, "WEBHOOK_TIMEOUT_MS", 15_000, 100),
      maxEndpoints: intFrom(env, "WEBHOOK_MAX_ENDPOINTS", DEFAULT_WEBHOOK_MAX_ENDPOINTS, 1),
      dueDays: intFrom(env, "WEBHOOK_DUE_DAYS", 7),
      dueHour: Math.min(23, intFrom(env, "WEBHOOK_DUE_HOUR", 8)),
      eventsRetentionDays: env.EVENTS_RETENTION_DAYS ? intFrom(env, "EVENTS_RETENTION_DAYS", 0, 1) : null,
    },
    reminders: reminderSettingsFrom(env),
    backup: { dir: resolve(env.BACKUP_DIR || join(dataDir, "backups")), intervalMs: backupIntervalFrom(env.BACKUP_INTERVAL), keep: intFrom(env, "BACKUP_KEEP", 7, 1) },
  };
}
