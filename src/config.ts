import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BackupSettings } from "./backup/store";
import type { PoolSizes } from "./db/client";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  jwtSecret: string;
  /** Encrypts the secrets kept in the database (CAF private keys, the SII certificate's key). */
  secretsKey: string;
  /** A PEM file of extra public keys trusted for CAF signatures (tests and development): their CAFs issue `environment: "test"` documents. */
  siiTestCafKeysFile: string | null;
  cookieSecure: boolean;
  quotaFlushMs: number;
  queryTimeoutMs: number;
  queryMaxRows: number;
  /** Largest planner cost `query_database` runs on the embedded database (no working statement_timeout there). */
  queryMaxCost: number;
  logLevel: LogLevel;
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number;
  limits: RestLimits;
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
}

/** The REST rate limits; tests lower or raise them. */
export interface RestLimits {
  authPerIpPerMinute: number;
  authFailuresPerEmail: number;
  authFailureWindowMs: number;
  perUserPerMinute: number;
}

export const DEFAULT_LIMITS: RestLimits = {
  authPerIpPerMinute: 10,
  authFailuresPerEmail: 5,
  authFailureWindowMs: 15 * 60 * 1000,
  perUserPerMinute: 600,
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

const listFrom = (raw: string | undefined) => (raw ?? "").split(",").map((item) => item.trim()).filter(Boolean);

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(env.DATA_DIR || "./data");
  const level = (env.LOG_LEVEL || "info") as LogLevel;
  if (!["debug", "info", "warn", "error", "silent"].includes(level)) throw new Error(`LOG_LEVEL "${level}" is unknown`);
  if (env.NODE_ENV === "production" && !env.SECRETS_KEY) throw new Error("SECRETS_KEY is required when NODE_ENV=production");
  return {
    port: intFrom(env, "PORT", 3000),
    host: env.HOST || "0.0.0.0",
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir,
    jwtSecret: resolveJwtSecret(env, dataDir),
    // Read or generated on first use, so commands that never touch the secrets write no key file.
    get secretsKey() {
      const value = resolveSecretsKey(env, dataDir);
      Object.defineProperty(this, "secretsKey", { value, enumerable: true });
      return value;
    },
    siiTestCafKeysFile: env.SII_TEST_CAF_KEYS ? resolve(env.SII_TEST_CAF_KEYS) : null,
    cookieSecure: env.COOKIE_SECURE !== "false",
    quotaFlushMs: intFrom(env, "QUOTA_FLUSH_MS", 2000, 10),
    queryTimeoutMs: intFrom(env, "QUERY_TIMEOUT_MS", 5000, 1),
    queryMaxRows: intFrom(env, "QUERY_MAX_ROWS", 1000, 1),
    queryMaxCost: intFrom(env, "QUERY_MAX_COST", 1_000_000, 1),
    logLevel: level,
    maxBodyBytes: intFrom(env, "MAX_BODY_BYTES", 1024 * 1024, 1024),
    limits: { ...DEFAULT_LIMITS },
    mcpAllowedOrigins: listFrom(env.MCP_ALLOWED_ORIGINS),
    corsOrigins: listFrom(env.CORS_ORIGINS),
    poolSizes: { main: intFrom(env, "DATABASE_POOL_SIZE", 10, 1), query: intFrom(env, "QUERY_POOL_SIZE", 4, 1) },
    memorySoftLimitMb: intFrom(env, "MEMORY_SOFT_LIMIT_MB", 384),
    backup: { dir: resolve(env.BACKUP_DIR || join(dataDir, "backups")), intervalMs: backupIntervalFrom(env.BACKUP_INTERVAL), keep: intFrom(env, "BACKUP_KEEP", 7, 1) },
  };
}
