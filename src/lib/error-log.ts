/**
 * What may be logged of an error: its class, its own message only when that message cannot hold
 * data, the SQLSTATE, and the stack frames. Drizzle's "Failed query: … params: …" messages and
 * the drivers' query/parameter fields carry statements and bound values (password hashes, key
 * digests, other clinics' SQL), so they are never logged: the cause's message is used instead.
 */
export type LoggableError = {
  error: string;
  sqlstate?: string;
  stack?: string;
};

const CARRIES_DATA = /failed query|params:|\$1|insert into|select |update |delete from/i;

export function loggableError(error: unknown): LoggableError {
  const parts: string[] = [];
  let sqlstate: string | undefined;
  let stack: string | undefined;
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (!(e instanceof Error)) {
      parts.push(typeof e === "string" && !CARRIES_DATA.test(e) ? e : typeof e);
      continue;
    }
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) sqlstate ??= code;
    parts.push(CARRIES_DATA.test(e.message) ? `${e.name} (message withheld: it may hold data)` : `${e.name}: ${e.message}`);
    stack ??= framesOnly(e.stack);
  }
  return { error: parts.join(" <- caused by "), ...(sqlstate ? { sqlstate } : {}), ...(stack ? { stack } : {}) };
}

/** A stack's frames without its first lines, which repeat the message. */
function framesOnly(stack: string | undefined): string | undefined {
  if (!stack) return undefined;
  const frames = stack.split("\n").filter((line) => line.trimStart().startsWith("at "));
  return frames.length ? frames.slice(0, 12).join("\n") : undefined;
}

/** SQLSTATE classes that say the database could not be reached, not that a row was wrong. */
export function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    // PGlite closed or not yet ready has no code of its own.
    if (e instanceof Error && /PGlite is closed|PGlite failed to initialize|not ready/i.test(e.message)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      // 55000 is also "database … is not currently accepting connections".
      if (/^(08|57P|53|3D000|55000)/.test(code) || ["ECONNREFUSED", "ECONNRESET", "CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT", "EPIPE"].includes(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code)) return false;
    }
  }
  return false;
}
