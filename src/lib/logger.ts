/** How much the log says; `silent` writes nothing, not even announcements. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Start-up and shutdown facts an operator always needs, whatever LOG_LEVEL says (except silent). */
  announce(msg: string, fields?: Record<string, unknown>): void;
  /** Whether lines of this level are written at all, so work done only for them can be skipped. */
  writes(level: Exclude<LogLevel, "silent">): boolean;
}

/** One JSON object per line. Callers pass fields, never secrets: no tokens, keys or passwords. */
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)): Logger {
  const threshold = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>, always = false) => {
    if (ORDER[lvl] < threshold && !(always && level !== "silent")) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    announce: (m, f) => emit("info", m, f, true),
    writes: (lvl) => ORDER[lvl] >= threshold,
  };
}

export const silentLogger: Logger = createLogger("silent");
