import { existsSync, mkdirSync } from "node:fs";
import { lockDataDir } from "./data-dir-lock";
import { join, resolve } from "node:path";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { createHash } from "node:crypto";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { sql, type SQL } from "drizzle-orm";
import { loadPgliteAssets, type PgliteAssets } from "./pglite-assets";
import { EMBEDDED_MIGRATIONS } from "./migrations.generated";
import { pgliteReadOnlyBatch, postgresReadOnlyBatch, type ReadOnlyBatch } from "./read-only-batch";
import * as schema from "./schema";
import { ChangeContexts, contextSettingStatement } from "./change-context";

export type Schema = typeof schema;
/** The one handle every service takes: the same Drizzle API over PGlite or PostgreSQL. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction handle is a Db too; services accept either. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

export type DatabaseKind = "embedded" | "memory" | "postgres";

export interface Database {
  db: Db;
  kind: DatabaseKind;
  /** Human description for start-up output, never containing a password. */
  location: string;
  /** Applies the migrations this version knows; `upTo`: only the first that many (restores of older backups). */
  migrate(upTo?: number): Promise<void>;
  /**
   * One transaction on one connection for bulk copies (backups, restores, moves, the usage
   * log's flush): a "snapshot" is REPEATABLE READ READ ONLY, so every table is read as of one
   * moment; "load" writes a whole database's rows (restores, moves); "write" writes a few
   * (the usage log's flush). "snapshot" and "load" run on the direct connection when there is
   * one (DATABASE_DIRECT_URL): a copy holds its connection for as long as it lasts, which a
   * pooler's small server pool should not lend out.
   * Dates and times are written in UTC, ISO style, whatever the server's settings.
   */
  copyTransaction<T>(mode: CopyMode, work: (session: CopySession) => Promise<T>): Promise<T>;
  /** Runs raw SQL on the direct (session) connection when there is one, else as `query` (planner statistics). */
  maintenanceQuery(text: string): Promise<unknown[]>;
  /**
   * How DATABASE_URL's connections are used: "session" (named prepared statements, kept per
   * connection), "pooled" (unnamed statements only, nothing kept between transactions: a
   * transaction-mode pooler), or "undecided" (used as pooled until a session is proven).
   */
  readonly connectionMode: ConnectionMode;
  /**
   * Reports that DATABASE_URL was proven to be a session (its own LISTEN heard its own NOTIFY):
   * without DATABASE_DIRECT_URL, its statements are then kept prepared.
   */
  confirmSession(): void;
  /** Runs raw SQL and returns its rows (the drivers disagree on result shapes). */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /**
   * Subscribes to a NOTIFY channel on a connection of its own. `onSubscribed` runs on every
   * (re)subscription and `onDisconnected` as soon as that connection is lost (notices sent while
   * it is down are lost; it reconnects by itself). Resolves once subscribed, or once the first
   * attempt failed (it keeps trying).
   */
  listen(channel: string, handlers: ListenHandlers): Promise<Subscription>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Runs the statements in order in one READ ONLY transaction on one connection, sent together
   * (one round trip); parameters are bound, never spliced. Any failure rolls it all back.
   */
  readOnlyBatch: ReadOnlyBatch;
  close(): Promise<void>;
  /** Who is changing what in the current request or job; every transaction carries it to the audit trigger. */
  changeContexts: ChangeContexts;
  /** PGlite only: a copy of the data directory, used to clone migrated test databases fast. */
  dumpDataDir?(): Promise<Blob | File>;
}

export type CopyMode = "snapshot" | "load" | "write";
export type ConnectionMode = "session" | "pooled" | "undecided";

/** A bulk-copy transaction: COPY in PostgreSQL's text format, which psql reads too. */
export interface CopySession {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** `COPY (select) TO STDOUT`: the rows as text, one per line. */
  copyOut(select: string): Promise<Uint8Array>;
  /** `COPY table (columns) FROM STDIN` with text in COPY's text format (as copyOut produces). */
  copyIn(table: string, columns: string[], data: Uint8Array): Promise<void>;
}

/** Session settings for copies, so that two servers write the same text for the same rows; rows copied are not changes (no events). */
const COPY_SETTINGS = ["SET LOCAL app.audit = 'off'", "SET LOCAL TimeZone = 'UTC'", "SET LOCAL DateStyle = 'ISO, YMD'", "SET LOCAL IntervalStyle = 'postgres'", "SET LOCAL extra_float_digits = 1"];
const SNAPSHOT_MODE = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY";

export interface ListenHandlers {
  onMessage(payload: string): void;
  /**
   * `direct`: the listening connection reaches the PostgreSQL server itself, not a pooler (the
   * server process it talks to is the one it was given at connect). Only then is every notice
   * delivered to it: a transaction-mode pooler passes a notice on only to a client that happens
   * to be running a statement on that server at that moment.
   */
  onSubscribed?(direct: boolean): void;
  onDisconnected?(): void;
}

export interface Subscription {
  /** The listening connection's application_name (PostgreSQL), so operators and tests can find it. */
  connectionName: string;
  stop(): Promise<void>;
}

/**
 * drizzle-kit's migrations, embedded at build time (src/db/migrations.generated.ts) so the
 * compiled binary needs no drizzle/ folder; applied by Drizzle's own migrator, same hashes.
 */
const MIGRATIONS: MigrationMeta[] = EMBEDDED_MIGRATIONS.map((m) => ({
  sql: m.sql.split("--> statement-breakpoint"),
  bps: m.breakpoints,
  folderMillis: m.when,
  hash: createHash("sha256").update(m.sql).digest("hex"),
}));

/** How many migrations this version knows, and their digests (a database's schema version is how many it applied). */
export const KNOWN_MIGRATIONS = MIGRATIONS.map((m, index) => ({ index, hash: m.hash, when: m.folderMillis, tag: EMBEDDED_MIGRATIONS[index]!.tag, sql: EMBEDDED_MIGRATIONS[index]!.sql }));

async function applyMigrations(db: Db, upTo = MIGRATIONS.length): Promise<void> {
  const internals = db as unknown as { dialect: { migrate(m: MigrationMeta[], session: unknown, config: object): Promise<void> }; session: unknown };
  await internals.dialect.migrate(MIGRATIONS.slice(0, upTo), internals.session, {});
}

/** Serializes concurrent start-ups of several instances against one PostgreSQL database. */
const MIGRATION_LOCK_ID = 724_311_001;

/**
 * PGlite runs PostgreSQL's defaults, whose 128 MB of shared buffers are most of an idle server's
 * memory. A clinic's working set is a few megabytes; 16 MB keeps its hot pages and leaves the
 * rest of a small box alone (resident memory idle: about 320 MB with the default, 195 MB with this).
 */
export const EMBEDDED_START_PARAMS = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];
/**
 * In memory (`memory://`) a new WAL segment is not written full of zeros first, nor an old one
 * kept for reuse: in memory that reserves nothing and only copies 16 MB a segment as the
 * in-memory file grows (a third of opening a database from a dump, and again at every segment).
 */
const MEMORY_START_PARAMS = [...EMBEDDED_START_PARAMS, "-c", "wal_init_zero=off", "-c", "wal_recycle=off"];

/** PostgreSQL connections per instance: the REST API's pool, and query_database's own. */
export interface PoolSizes {
  main: number;
  query: number;
}
const DEFAULT_POOL_SIZES: PoolSizes = { main: 10, query: 4 };

export interface OpenDatabaseOptions {
  databaseUrl?: string | undefined;
  /**
   * PostgreSQL only: a direct (session) connection to the same database, for what needs a
   * session (LISTEN, migrations, backups' and moves' COPY, planner statistics) when
   * `databaseUrl` goes through a transaction-mode pooler.
   */
  databaseDirectUrl?: string | undefined;
  dataDir: string;
  poolSizes?: PoolSizes;
  /** For `memory://`: start from this data-directory dump (a migrated template) instead of initdb. */
  memoryTemplate?: Blob | File;
  /** PGlite's compiled modules, when the caller already has them (compiled here otherwise). */
  pglite?: Promise<PgliteAssets>;
  /** PostgreSQL's module, when its compile was started earlier (src/index.ts starts it before loading the rest). */
  compiledPostgres?: Promise<WebAssembly.Module>;
}

/** A database whose start-up may still be under way: the handle works at once (its queries wait), `ready` settles when it answers. */
export interface OpeningDatabase {
  database: Database;
  /** Rejects if the database cannot start; the handle is then dead and the data directory free. */
  ready: Promise<void>;
}

/** Opens the database and waits until it answers. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { database, ready } = await beginOpeningDatabase(options);
  await ready;
  return database;
}

/**
 * Opens the database without waiting for the embedded one to start (it compiles and starts
 * PostgreSQL meanwhile, the compile on another thread), so that the caller can build what needs
 * only the handle. PostgreSQL's pool is ready at once (it connects on first use).
 */
export async function beginOpeningDatabase(options: OpenDatabaseOptions): Promise<OpeningDatabase> {
  const url = options.databaseUrl?.trim();
  if (!url) {
    const dir = join(options.dataDir, "pg");
    mkdirSync(dir, { recursive: true });
    const lock = lockDataDir(options.dataDir);
    try {
      const assets = await (options.pglite ?? loadPgliteAssets({ initdb: !existsSync(join(dir, "PG_VERSION")), compiledPostgres: options.compiledPostgres }));
      const { client, ready } = launchPglite(dir, assets, { startParams: EMBEDDED_START_PARAMS });
      const database = pgliteDatabase(client, "embedded", `embedded PGlite in ${resolve(dir)}`);
      let failed = false;
      const close = database.close;
      const started = ready.catch((error: unknown) => {
        failed = true;
        lock.release();
        throw error;
      });
      const closing = async () => {
        // PGlite that never started cannot be closed (closing waits for it); its lock is already released.
        if (failed) return;
        try {
          await close();
        } finally {
          lock.release();
        }
      };
      return { database: Object.assign(database, { close: closing }), ready: started };
    } catch (error) {
      lock.release();
      throw error;
    }
  }
  if (url === "memory://") {
    const assets = await (options.pglite ?? loadPgliteAssets({ initdb: !options.memoryTemplate, compiledPostgres: options.compiledPostgres }));
    const { client, ready } = launchPglite(undefined, assets, { startParams: MEMORY_START_PARAMS, ...(options.memoryTemplate ? { loadDataDir: options.memoryTemplate } : {}) });
    return { database: pgliteDatabase(client, "memory", "in-memory PGlite"), ready };
  }
  const directUrl = options.databaseDirectUrl?.trim() || undefined;
  if (directUrl && !/^postgres(ql)?:\/\//.test(directUrl)) throw new Error("DATABASE_DIRECT_URL must be postgres://… (got a value of another form)");
  if (/^postgres(ql)?:\/\//.test(url)) return { database: await openPostgres(url, directUrl, options.poolSizes ?? DEFAULT_POOL_SIZES), ready: Promise.resolve() };
  if (directUrl) throw new Error("DATABASE_DIRECT_URL goes with a postgres:// DATABASE_URL");
  throw new Error(`DATABASE_URL must be postgres://…, memory:// or unset (got a value of another form)`);
}

/**
 * Starts PGlite on `dataDir` (or in memory) with these assets; `ready` settles when it answers.
 * PGlite leaves a failed compile unhandled where it awaits it (start-up would hang), so it is
 * given a module that never arrives in that case, and `ready` reports the failure instead.
 */
export function launchPglite(dataDir: string | undefined, assets: PgliteAssets, options: Omit<PGliteOptions, "pgliteWasmModule">): { client: PGlite; ready: Promise<void> } {
  const compiled = Promise.resolve(assets.pgliteWasmModule);
  const moduleOrNever = compiled.catch(() => new Promise<never>(() => {}));
  // The patched PGlite awaits whatever it is given here; its type still says a compiled module.
  const pgliteOptions = { ...assets, ...options, pgliteWasmModule: moduleOrNever as unknown as WebAssembly.Module };
  const client = dataDir === undefined ? new PGlite(pgliteOptions) : new PGlite(dataDir, pgliteOptions);
  return { client, ready: Promise.all([compiled, client.waitReady]).then(() => {}) };
}

/** The handle over a PGlite client, usable before it is ready (PGlite holds queries until then). */
function pgliteDatabase(client: PGlite, kind: DatabaseKind, location: string): Database {
  const changeContexts = new ChangeContexts();
  const db = drizzlePglite(pgliteWithChangeContext(client, changeContexts), { schema }) as unknown as Db;
  return {
    changeContexts,
    db,
    kind,
    location,
    migrate: (upTo) => applyMigrations(db, upTo),
    query: async <T>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[],
    maintenanceQuery: async (text) => (await client.query(text)).rows,
    connectionMode: "session",
    confirmSession: () => {},
    copyTransaction: (mode, work) =>
      client.transaction(async (tx) => {
        if (mode === "snapshot") await tx.query(SNAPSHOT_MODE);
        for (const setting of COPY_SETTINGS) await tx.query(setting);
        return work({
          query: async <T>(text: string, params: unknown[] = []) => (await tx.query(text, params)).rows as T[],
          async copyOut(select) {
            const result = await tx.query(`COPY (${select}) TO '/dev/blob'`);
            // An empty table writes no blob at all.
            return result.blob ? new Uint8Array(await result.blob.arrayBuffer()) : new Uint8Array();
          },
          async copyIn(table, columns, data) {
            await tx.query(`COPY ${table} (${columns.join(", ")}) FROM '/dev/blob'`, [], { blob: new Blob([data]) });
          },
        });
      }),
    async listen(channel, handlers) {
      // In process: the subscription cannot be lost.
      const unsubscribe = await client.listen(channel, handlers.onMessage);
      handlers.onSubscribed?.(true);
      return { connectionName: "pglite", stop: async () => unsubscribe() };
    },
    async notify(channel, payload) {
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    readOnlyBatch: pgliteReadOnlyBatch(client),
    close: () => client.close(),
    dumpDataDir: () => client.dumpDataDir("none"),
  };
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "postgres://…";
  }
}

/**
 * How the driver behaves while the server is away. A connection attempt that gets no answer
 * gives up after CONNECT_TIMEOUT_SECONDS (the call waiting on it answers 503 then, instead of
 * after the driver's default 30 s). Between failed attempts a connection waits 50–150 ms: the
 * driver's own backoff grows to 20 s, so a server back after a few seconds stayed unused for up
 * to 5 s; a short jittered wait costs a handful of refused connects per second while it is down
 * and reaches it within a fraction of a second once it is back.
 */
export const CONNECT_TIMEOUT_SECONDS = 2;
const reconnectBackoffSeconds = () => 0.05 + Math.random() * 0.1;
const RECONNECT_OPTIONS = { connect_timeout: CONNECT_TIMEOUT_SECONDS, backoff: reconnectBackoffSeconds };

const LISTEN_RETRY_MS = 200;

/**
 * LISTEN on a dedicated connection that reports its loss at once: postgres.js's own `listen`
 * resubscribes silently, so a caller could not know that notices were being missed meanwhile.
 */
async function listenPostgres(url: string, channel: string, handlers: ListenHandlers): Promise<Subscription> {
  const connectionName = `vet-clinic-listener-${process.pid}-${Bun.randomUUIDv7().slice(-12)}`;
  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const connection = postgres(url, {
    max: 1,
    idle_timeout: null,
    max_lifetime: null,
    fetch_types: false,
    prepare: false,
    ...RECONNECT_OPTIONS,
    onnotice: () => {},
    connection: { application_name: connectionName },
    onnotify: (name: string, payload: string) => {
      if (name === channel) handlers.onMessage(payload);
    },
    onclose: () => {
      if (stopped) return;
      handlers.onDisconnected?.();
      scheduleSubscribe();
    },
  } as unknown as postgres.Options<{}>);
  const subscribe = async () => {
    const listening = await connection.unsafe(`listen "${channel.replaceAll('"', '""')}"`);
    // The process id the server announced at connect (BackendKeyData) against the one running the
    // statements: a pooler announces a key of its own, so they match only on a direct connection.
    const announced = (listening as unknown as { state?: { pid?: number | null } }).state?.pid;
    const [serving] = await connection.unsafe<{ pid: number }[]>("select pg_backend_pid() as pid");
    handlers.onSubscribed?.(announced != null && Number(serving?.pid) === announced);
  };
  const scheduleSubscribe = () => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      subscribe().catch(() => scheduleSubscribe());
    }, LISTEN_RETRY_MS);
    retry.unref?.();
  };
  // A first subscription that fails (the server or a pooler busy or away at start) is retried
  // like a lost one; the caller hears of it through onSubscribed.
  await subscribe().catch(() => scheduleSubscribe());
  return {
    connectionName,
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      await connection.end({ timeout: 1 }).catch(() => {});
    },
  };
}

/** Pooled connections are replaced after this long, which also bounds what each one has prepared. */
const CONNECTION_MAX_LIFETIME_SECONDS = 30 * 60;

/**
 * `url` is DATABASE_URL, possibly a transaction-mode pooler (PgBouncer, Supavisor, Neon's pooler,
 * RDS Proxy); `directUrl` (DATABASE_DIRECT_URL) a session. On DATABASE_URL nothing relies on the
 * session: settings are transaction-local (`set_config(…, true)`, SET LOCAL), locks are
 * transaction locks, and statements are unnamed (parsed with each call, in the same round trip
 * as their parameters' description) until DATABASE_URL is proven to be a session: a pooler hands
 * each transaction whichever server connection is free, where a named statement prepared on
 * another does not exist.
 */
async function openPostgres(url: string, directUrl: string | undefined, poolSizes: PoolSizes): Promise<Database> {
  let connectionMode: ConnectionMode = directUrl ? "pooled" : "undecided";
  const pool = (max: number, applicationName: string) =>
    postgres(url, {
      max,
      max_lifetime: CONNECTION_MAX_LIFETIME_SECONDS,
      prepare: false,
      ...RECONNECT_OPTIONS,
      onnotice: () => {},
      connection: { application_name: applicationName },
      // Values arrive as the drivers' defaults; bigint money columns are mapped by Drizzle.
    });
  const pipelines = () => connectionMode === "session";
  const client = withoutPipeliningUnlessSession(pool(poolSizes.main, "vet-clinic"), pipelines);
  // query_database gets connections of its own: an API key's slow statements (up to the
  // statement timeout each) queue among themselves and never hold the REST API's connections.
  const queryClient = withoutPipeliningUnlessSession(pool(poolSizes.query, "vet-clinic-query"), pipelines);
  // The direct connection: small, and opened only when something needs it.
  const direct = directUrl
    ? postgres(directUrl, { max: 2, idle_timeout: 60, max_lifetime: CONNECTION_MAX_LIFETIME_SECONDS, ...RECONNECT_OPTIONS, onnotice: () => {}, connection: { application_name: "vet-clinic-direct" } })
    : client;
  const changeContexts = new ChangeContexts();
  const db = drizzlePostgres(postgresWithChangeContext(client, changeContexts), { schema }) as unknown as Db;
  const copyTransaction = (sql: postgres.Sql, mode: CopyMode, work: (session: CopySession) => Promise<unknown>) =>
    sql.begin(async (sql) => {
      if (mode === "snapshot") await sql.unsafe(SNAPSHOT_MODE);
      for (const setting of COPY_SETTINGS) await sql.unsafe(setting);
      return work({
        query: async <T>(text: string, params: unknown[] = []) => (await sql.unsafe(text, params as never[])) as unknown as T[],
        async copyOut(select) {
          const chunks: Uint8Array[] = [];
          const stream = await sql.unsafe(`COPY (${select}) TO STDOUT`).readable();
          // Read with events: under Bun, iterating the stream with for-await leaves the
          // connection waiting, and the next COPY on it never starts.
          await new Promise<void>((done, fail) => {
            stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
            stream.on("end", () => done());
            stream.on("error", fail);
          });
          return new Uint8Array(Buffer.concat(chunks));
        },
        async copyIn(table, columns, data) {
          const writable = await sql.unsafe(`COPY ${table} (${columns.join(", ")}) FROM STDIN`).writable();
          await pipeline(Readable.from([Buffer.from(data)]), writable);
        },
      });
    });
  return {
    db,
    changeContexts,
    kind: "postgres",
    location: `PostgreSQL at ${redactUrl(url)}${directUrl ? ` (direct connection ${redactUrl(directUrl)})` : ""}`,
    get connectionMode() {
      return connectionMode;
    },
    confirmSession() {
      if (connectionMode !== "undecided") return;
      connectionMode = "session";
      // postgres.js reads this option for every statement it builds.
      client.options.prepare = true;
      queryClient.options.prepare = true;
    },
    async migrate(upTo) {
      // One transaction, holding a transaction-level lock that serializes concurrent start-ups:
      // a session lock taken through a pooler may be taken and released on different servers.
      const migrator = postgres(directUrl ?? url, { max: 1, prepare: false, ...RECONNECT_OPTIONS, onnotice: () => {}, connection: { application_name: "vet-clinic-migrate" } });
      try {
        await drizzlePostgres(migrator, { schema }).transaction(async (tx) => {
          await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`);
          // Drizzle's migrator opens a transaction of its own; here it is this one.
          const session = { execute: (query: SQL) => tx.execute(query), all: (query: SQL) => tx.execute(query), transaction: (work: (t: typeof tx) => Promise<void>) => work(tx) };
          await applyMigrations(Object.assign(Object.create(tx), { session }) as Db, upTo);
        });
      } finally {
        await migrator.end({ timeout: 5 });
      }
    },
    query: async <T>(text: string, params: unknown[] = []) => (await client.unsafe(text, params as never[])) as unknown as T[],
    maintenanceQuery: async (text) => [...(await direct.unsafe(text))],
    copyTransaction: (mode, work) => copyTransaction(mode === "write" ? client : direct, mode, work) as Promise<never>,
    listen: (channel, handlers) => listenPostgres(directUrl ?? url, channel, handlers),
    async notify(channel, payload) {
      // Delivered at commit to every listener of the database, whichever connection sends it; the
      // direct one, when there is one, does not queue behind the pooler's other clients. Sent with
      // `unsafe` (the driver's `notify` bypasses the no-pipelining rule when there is no direct one).
      await direct.unsafe("select pg_notify($1, $2)", [channel, payload]);
    },
    readOnlyBatch: postgresReadOnlyBatch(queryClient, CONNECTION_MAX_LIFETIME_SECONDS, () => connectionMode === "session"),
    close: async () => {
      await Promise.all([client.end({ timeout: 5 }), queryClient.end({ timeout: 5 }), direct === client ? undefined : direct.end({ timeout: 5 })]);
    },
  };
}

/**
 * Behind a transaction-mode pooler, no statement is sent on a connection behind another outside
 * a transaction. postgres.js pipelines: it writes a statement on a connection still running
 * others. A pooler that does not follow pipelined statements (PgBouncer before 1.21) gives the
 * server back to its pool as soon as the first one ends its transaction, and drops the answers
 * to the ones behind it ("got packet … from server when not linked"): they wait for ever.
 *
 * So, unless `pipelines()` (a proven session), every statement sent outside a transaction tells
 * the driver, once written, that its connection takes nothing more until it has answered (the
 * driver's `onexecute` hook answers whether the connection may take another statement now, as
 * `begin` uses it). The pool then lends only idle connections: to statements, and to `begin`,
 * whose connection takes nothing else either. Inside a transaction statements are still sent
 * together: the pooler keeps the server to the client until the transaction ends.
 * postgres.js's own `max_pipeline` cannot do this: at 1 it still sends one statement behind a
 * running one, and at 0 `begin` never reserves its connection (UNSAFE_TRANSACTION).
 */
function withoutPipeliningUnlessSession(client: postgres.Sql, pipelines: () => boolean): postgres.Sql {
  const takesNothingBehind = { onexecute: () => false } as postgres.UnsafeQueryOptions;
  return new Proxy(client, {
    apply(target, self, args: unknown[]) {
      const built = Reflect.apply(target, self, args) as { options?: object };
      // A tagged-template statement (the other calls build fragments and identifiers).
      const strings = args[0] as { raw?: unknown } | undefined;
      if (!pipelines() && Array.isArray(strings?.raw) && built.options) Object.assign(built.options, takesNothingBehind);
      return built;
    },
    get(target, property, receiver) {
      if (property === "unsafe")
        return (query: string, params?: never[], options?: postgres.UnsafeQueryOptions) =>
          target.unsafe(query, params, pipelines() ? options : { ...options, ...takesNothingBehind });
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * The client Drizzle uses, with every transaction begun under a change context first setting
 * the audit trigger's transaction-local settings (sent without waiting, so with the first
 * statement), and a write outside a transaction made one for the same reason.
 */
function postgresWithChangeContext(client: postgres.Sql, contexts: ChangeContexts): postgres.Sql {
  // Sent ahead of the transaction's first statement without waiting for it. Written in, unnamed
  // and without parameters: the driver pipelines such a statement, where one with parameters and
  // no prepared statement is described first, a round trip of its own before the next may leave.
  const tagged = (sql: postgres.TransactionSql, context: string) => sql.unsafe(contextSettingStatement(context), [], { prepare: false }).execute().catch(() => {});
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "begin")
        return (...args: unknown[]) => {
          const settings = contexts.settings();
          const work = args.pop() as (sql: postgres.TransactionSql) => unknown;
          if (!settings) return (target.begin as Function)(...args, work);
          return (target.begin as Function)(...args, (sql: postgres.TransactionSql) => (tagged(sql, settings), work(sql)));
        };
      if (property === "unsafe")
        return (query: string, params?: never[], options?: postgres.UnsafeQueryOptions) => {
          const settings = contexts.settings();
          if (!settings || !contexts.isWrite(query)) return target.unsafe(query, params, options);
          const run = (values: boolean) =>
            target.begin((sql) => {
              tagged(sql, settings);
              const statement = sql.unsafe(query, params, options);
              return values ? statement.values() : statement;
            });
          return { values: () => run(true), then: (done: (v: unknown) => unknown, fail: (e: unknown) => unknown) => run(false).then(done, fail) };
        };
      return Reflect.get(target, property, receiver);
    },
  });
}

function pgliteWithChangeContext(client: PGlite, contexts: ChangeContexts): PGlite {
  type Transaction = Parameters<Parameters<PGlite["transaction"]>[0]>[0];
  const inTransaction = <T>(context: string, work: (tx: Transaction) => Promise<T>) =>
    client.transaction(async (tx) => {
      // The simple protocol: in process, one message without parameters costs a third of a prepared one.
      await tx.exec(contextSettingStatement(context));
      return work(tx);
    });
  return new Proxy(client, {
    get(target, property) {
      if (property === "transaction")
        return <T>(work: (tx: Transaction) => Promise<T>) => {
          const settings = contexts.settings();
          return settings ? inTransaction(settings, work) : target.transaction(work);
        };
      if (property === "query")
        return (query: string, params?: unknown[], options?: object) => {
          const settings = contexts.settings();
          if (!settings || !contexts.isWrite(query)) return target.query(query, params, options);
          return inTransaction(settings, (tx) => tx.query(query, params, options));
        };
      // PGlite's methods read private fields: they must run on the client itself.
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** What every service function takes: the database (or a transaction) and the clock. */
export interface ServiceContext {
  db: Db;
  clock: import("../lib/clock").Clock;
}

/** The rows of a Drizzle `execute` result: PGlite's driver answers `{rows}`, postgres.js the rows themselves. */
export function rowsOf<T>(result: unknown): T[] {
  return ((result as { rows?: T[] }).rows ?? (result as T[])) as T[];
}

/** PostgreSQL error code of a driver error, looking through Drizzle's wrapper. */
export function pgErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export const isUniqueViolation = (error: unknown) => pgErrorCode(error) === "23505";
