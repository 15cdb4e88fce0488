import { join, resolve } from "node:path";
import { contractFor, type ContractChecker } from "./contract";
import { isNewDataDir, seedDataDir } from "./database";
import { SHORT_RUN_JIT_ENV } from "./jit";

export interface ServerProcess {
  baseUrl: string;
  pid: number;
  lines: string[];
  /** Sends a signal and waits for the process to exit; resolves to its exit code. */
  stop(signal?: "SIGTERM" | "SIGINT"): Promise<number>;
  waitForLog(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

const ROOT = join(import.meta.dir, "../..");

/**
 * The environment of a CLI run or server a test starts with nothing inherited: PATH, a JWT
 * secret, the test run's JIT settings, then `env`.
 */
export const cliEnv = (env: Record<string, string> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  JWT_SECRET: "process-test-secret-of-at-least-32-bytes!",
  ...SHORT_RUN_JIT_ENV,
  ...env,
});

/** Server processes not yet stopped: a script that dies (a failed check, a benchmark that throws) takes them with it. */
const running = new Set<ReturnType<typeof Bun.spawn>>();
process.once("exit", () => {
  for (const child of running) {
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/**
 * How long a hook that stops servers may take: a server's graceful shutdown waits up to 10 s for
 * in-flight requests, then flushes and gives each database pool 5 s to end. Bun's 5 s default
 * for hooks (only the first test file gets the preload's longer one) is shorter than that, and
 * timed out now and then after the outage test's last outage.
 */
export const SERVER_STOP_TIMEOUT_MS = 30_000;

/**
 * Starts `bun src/index.ts` (or `command`, e.g. the compiled binary) as a real process on a free
 * port. `env` sets the database: DATA_DIR (embedded) or DATABASE_URL (PostgreSQL). A DATA_DIR
 * that is missing or empty gets a migrated database copied in first (seedDataDir), unless
 * `emptyDataDir` asks for what a brand-new directory does.
 */
export async function startServer(env: Record<string, string>, options: { command?: string[]; cwd?: string; emptyDataDir?: boolean } = {}): Promise<ServerProcess> {
  const dataDir = env.DATA_DIR ? resolve(options.cwd ?? ROOT, env.DATA_DIR) : undefined;
  if (dataDir && !env.DATABASE_URL && !options.emptyDataDir && isNewDataDir(dataDir)) await seedDataDir(dataDir);
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && name !== "DATABASE_URL" && name !== "DATABASE_DIRECT_URL") childEnv[name] = value;
  Object.assign(childEnv, cliEnv({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", COOKIE_SECURE: "false", REGISTRATION: "open", ...env }));
  if (!env.DATA_DIR) delete childEnv.DATA_DIR;
  const child = Bun.spawn(options.command ?? ["bun", "src/index.ts"], { cwd: options.cwd ?? ROOT, env: childEnv, stdout: "pipe", stderr: "inherit" });
  running.add(child);
  void child.exited.then(() => running.delete(child));
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  const lines: string[] = [];
  let buffer = "";
  const matching = (line: string, match: (line: Record<string, unknown>) => boolean) => {
    try {
      const parsed = JSON.parse(line);
      return match(parsed) ? (parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  /** Moves the complete lines already read into `lines`, stopping at the first that matches. */
  const takeLines = (match: (line: Record<string, unknown>) => boolean) => {
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      lines.push(line);
      const found = matching(line, match);
      if (found) return found;
    }
    return undefined;
  };
  const waitForLog = async (match: (line: Record<string, unknown>) => boolean) => {
    for (const line of lines) {
      const found = matching(line, match);
      if (found) return found;
    }
    // Lines that arrived in the same chunk as an earlier match are taken before waiting for more:
    // a quiet server may write nothing else for a long time.
    for (;;) {
      const found = takeLines(match);
      if (found) return found;
      const { value, done } = await reader.read();
      if (done) throw new Error(`server exited before the expected log line:\n${lines.join("\n")}`);
      buffer += decoder.decode(value, { stream: true });
    }
  };
  const listening = await waitForLog((l) => l.msg === "listening");
  // Keep draining stdout so the child never blocks on a full pipe.
  const drain = (async () => {
    try {
      await waitForLog(() => false);
    } catch {}
  })();
  return {
    // The address it listens on: base_url is PUBLIC_URL when that is set.
    baseUrl: String(listening.listen ?? listening.base_url),
    pid: child.pid,
    lines,
    waitForLog,
    async stop(signal = "SIGTERM") {
      child.kill(signal);
      const code = await child.exited;
      await drain;
      return code;
    },
  };
}

const documents = new Map<string, Promise<ContractChecker>>();

/** The server's own /openapi.json, fetched once per server. */
function contractOf(baseUrl: string): Promise<ContractChecker> {
  let checker = documents.get(baseUrl);
  if (!checker) documents.set(baseUrl, (checker = fetch(`${baseUrl}/openapi.json`).then(async (r) => contractFor((await r.json()) as Record<string, unknown>))));
  return checker;
}

/** JSON over HTTP to a server process; the response is checked against the server's document. */
export async function call(baseUrl: string, method: string, path: string, options: { json?: unknown; token?: string } = {}) {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
  const text = await response.text();
  const broken = (await contractOf(baseUrl)).problem(method, path, response.status, response.headers, text);
  if (broken) throw new Error(`contract: ${broken}\nbody: ${text.slice(0, 1000)}`);
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}
