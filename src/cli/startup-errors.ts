import { resolve } from "node:path";
import { DataDirLockedError } from "../db/data-dir-lock";
import { redactUrl } from "../db/client";
import { isConnectionError } from "../lib/error-log";
import { SecretsKeyMismatchError } from "./secrets";

/** A start-up step that failed, kept apart so the message can say which step. */
export class MigrationFailedError extends Error {
  constructor(
    readonly location: string,
    override readonly cause: unknown,
  ) {
    super(`migrations failed on ${location}`);
    this.name = "MigrationFailedError";
  }
}

// Emscripten's (PGlite's) file-system errors carry WASI errno numbers and no message.
const EMSCRIPTEN_ERRNO: Record<number, string> = { 2: "EACCES", 51: "ENOSPC", 54: "ENOTDIR", 63: "EPERM", 69: "EROFS", 44: "ENOENT" };

function errnoCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
    if (typeof errno === "number" && EMSCRIPTEN_ERRNO[errno]) return EMSCRIPTEN_ERRNO[errno];
  }
  return undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (error && typeof error === "object") return JSON.stringify(error);
  return String(error);
}

/**
 * One line a person can act on for anything that stops the service from starting: the cause
 * and the directory, URL or port it concerns. Never "[object Object]".
 */
export function describeStartupError(error: unknown, env: Record<string, string | undefined> = process.env): string {
  const dataDir = resolve(env.DATA_DIR || "./data");
  const url = env.DATABASE_URL?.trim();
  const where = url && url !== "memory://" ? `PostgreSQL at ${redactUrl(url)}` : `the data directory ${dataDir}`;
  if (error instanceof DataDirLockedError || error instanceof SecretsKeyMismatchError) return error.message;
  const code = errnoCode(error);
  if (url && url !== "memory://" && (isConnectionError(error) || code === "ECONNREFUSED" || code === "ENOTFOUND")) {
    return `${where} cannot be reached: ${messageOf(error instanceof MigrationFailedError ? error.cause : error)}`;
  }
  if (error instanceof MigrationFailedError) return `${error.message}: ${messageOf(error.cause)}`;
  if (code === "EADDRINUSE") return `port ${env.PORT ?? "3000"} on ${env.HOST ?? "0.0.0.0"} is already in use by another process; stop it or set PORT`;
  if (code === "ENOTDIR" || code === "EEXIST") return `${where} is not a directory (DATA_DIR must name a directory)`;
  if (code === "EACCES" || code === "EPERM") return `${where} is not writable by this user (${code}); fix its permissions or set DATA_DIR`;
  if (code === "EROFS") return `${where} is on a read-only filesystem; set DATA_DIR to a writable directory`;
  if (code === "ENOSPC") return `the disk holding ${where} is full; free space and start again`;
  if (/PGlite|initdb|wasm|Aborted/i.test(messageOf(error)) || (!url && !(error instanceof Error))) {
    return `the embedded database in ${dataDir}/pg could not be opened; it may be corrupt or written by an incompatible version (${messageOf(error)}). Restore a backup or move it aside`;
  }
  return `${messageOf(error)} (${where})`;
}
