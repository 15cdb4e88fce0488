import { createApp, type App, type BuiltApp } from "../../src/app";
import { DEFAULT_LIMITS, type Config } from "../../src/config";
import { ManualClock } from "../../src/lib/clock";
import { testCafKeysFile } from "../billing/sii-fixtures";
import { createLogger, silentLogger, type Logger } from "../../src/lib/logger";
import { contractFor } from "./contract";
import { createTestDatabase, type TestDatabase } from "./database";

export const TEST_SECRET = "test-secret-that-is-at-least-32-bytes-long!!";

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: "127.0.0.1",
    databaseUrl: undefined,
    dataDir: "/nonexistent",
    jwtSecret: TEST_SECRET,
    secretsKey: "test-secrets-key-that-is-at-least-32-bytes",
    // The stand-in SII of the tests: CAFs it signs are trusted (environment "test").
    siiTestCafKeysFile: testCafKeysFile(),
    cookieSecure: true,
    trustedProxies: [],
    // Most tests register clinics of their own; the registration tests set it back to closed.
    registration: "open",
    quotaFlushMs: 2000,
    queryTimeoutMs: 5000,
    queryMaxRows: 1000,
    queryMaxCost: 1_000_000,
    logLevel: "silent",
    maxBodyBytes: 1024 * 1024,
    mcpAllowedOrigins: [], corsOrigins: [],
    backup: { dir: "/nonexistent/backups", intervalMs: null, keep: 7 },
    poolSizes: { main: 10, query: 4 },
    memorySoftLimitMb: 0,
    // Tests run the dispatcher by hand (runOnce) with a short schedule, against receivers on 127.0.0.1.
    webhooks: { dispatch: false, retryScheduleMs: [0, 1000, 5000], allowedNetworks: ["127.0.0.0/8"], allowHttp: true, timeoutMs: 2000, dueDays: 7, dueHour: 8 },
    // Generous by default so set-up traffic is not throttled; limit tests lower them.
    limits: { ...DEFAULT_LIMITS, authPerIpPerMinute: 10_000, loginFailuresBeforeDelay: 10_000, perUserPerMinute: 100_000, oauthPerIpPerMinute: 10_000 },
    ...overrides,
  };
}

export interface TestApp extends BuiltApp {
  app: App;
  clock: ManualClock;
  database: TestDatabase;
  logLines: string[];
  /** Sends a request to the app; `json` bodies are serialized, `token` becomes a Bearer header. */
  request<Body = unknown>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<Body>>;
  /** Rows in a table (all clinics), for "wrote nothing" checks. */
  count(table: string): Promise<number>;
  /** Runs shutdown work and drops the database it created (call in afterAll). */
  close(): Promise<void>;
}

export interface RequestOptions {
  json?: unknown;
  body?: string | Uint8Array;
  token?: string;
  headers?: Record<string, string>;
}

/** The error envelope every refusal carries. */
export interface ErrorBody {
  error: string;
  code: string;
  message: string;
  details?: unknown;
  request_id: string;
}

/** A refusal whose `details` a test reads. */
export type Refusal<Details> = ErrorBody & { details: Details };

/** VALIDATION_FAILED's details: each refused value. */
export interface ValidationDetails {
  fields: { path: string; message: string }[];
}

/** A list's page in the legacy offset form (`?offset=`; OffsetPage in src/http/pagination.ts). */
export interface OffsetPageBody<Item> {
  data: Item[];
  total_count: number;
  limit: number;
  offset: number;
}

/** A route's body when a test reads either it or the refusal (tests check `status` first). */
export type Answer<Body> = Body & Partial<ErrorBody>;

/**
 * A response as a test reads it. `Body` is the route's response type when the test names it
 * (`owner.as<TutorView>(…)`, from the route's model); unnamed, it is `unknown` until a test names it.
 */
export interface TestResponse<Body = unknown> {
  status: number;
  headers: Headers;
  body: Body;
  text: string;
}

/**
 * An app over a fresh database with a manual clock; close it in afterAll.
 * Pass `database` to share one database between two apps (as two instances would).
 */
export async function createTestApp(options: { config?: Partial<Config>; clock?: ManualClock; database?: TestDatabase; logger?: Logger } = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const clock = options.clock ?? new ManualClock();
  const logLines: string[] = [];
  const logger = options.logger ?? createLogger("debug", (line) => void logLines.push(line));
  const built = createApp({ database, config: testConfig(options.config), clock, logger });
  const request = async <Body = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<Body>> => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers["content-type"] ??= "application/json; charset=utf-8";
    }
    const response = await built.app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    const broken = contractFor(built.context.apiDocument.json).problem(method, path, response.status, response.headers, text);
    if (broken) throw new Error(`contract: ${broken}\nbody: ${text.slice(0, 1000)}`);
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed as Body, text };
  };
  const close = async () => {
    await built.context.lifecycle.beforeClose();
    if (!options.database) await database.destroy();
  };
  const count = async (table: string) => Number((await database.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n);
  return { ...built, clock, database, logLines, request, count, close };
}

export { silentLogger };
