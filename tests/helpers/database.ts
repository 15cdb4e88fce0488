import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { KNOWN_MIGRATIONS, openDatabase, type Database } from "../../src/db/client";
import { loadPgliteAssets, type PgliteAssets } from "../../src/db/pglite-assets";

export const POSTGRES_URL = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
/**
 * When DATABASE_URL is a transaction-mode pooler (the pooled pass of .ci/run), DATABASE_DIRECT_URL
 * reaches the same server directly: databases are created and dropped there, and each test
 * database gets both URLs, as a deployment behind a pooler has.
 */
export const POSTGRES_DIRECT_URL = POSTGRES_URL && process.env.DATABASE_DIRECT_URL?.startsWith("postgres") ? process.env.DATABASE_DIRECT_URL : undefined;
const ADMIN_URL = POSTGRES_DIRECT_URL ?? POSTGRES_URL;

/** The same server's URL for database `name`. */
export function urlForDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
export const databaseKind = POSTGRES_URL ? "postgres" : "pglite";

/**
 * What a migrated template depends on: the migrations and the PGlite build. A template made from
 * other migrations (another branch, an older checkout) has another name and is never used.
 */
const TEMPLATE_KEY = createHash("sha256")
  // The template's own recipe (cachedTemplateDump's trimming): a change to it makes another name.
  .update("trimmed-3")
  .update(KNOWN_MIGRATIONS.map((m) => m.hash).join(","))
  .update(readFileSync(join(import.meta.dir, "../../node_modules/@electric-sql/pglite/package.json")))
  .digest("hex")
  .slice(0, 16);

/** A migrated PGlite data directory, made once per test process and cloned for each database. */
let pgliteTemplate: Promise<Blob> | undefined;
/** PGlite's modules, compiled once per test process for every in-memory database. */
let pgliteModules: Promise<PgliteAssets> | undefined;
export const sharedPgliteAssets = () => (pgliteModules ??= loadPgliteAssets());

/**
 * Builds the template ahead (the preload does, so no test's hook pays for it). It is kept on disk
 * under the temporary directory, keyed by TEMPLATE_KEY: the workers of a parallel run, and later
 * runs, read it instead of each migrating a database of their own (about 5 s of CPU each).
 */
export const preparePgliteTemplate = () => (pgliteTemplate ??= cachedTemplateDump());

async function cachedTemplateDump(): Promise<Blob> {
  const dir = join(tmpdir(), "vet-clinic-test-templates");
  const file = join(dir, `pglite-${TEMPLATE_KEY}.tar`);
  try {
    return new Blob([readFileSync(file)]);
  } catch {
    // Not made yet: made here.
  }
  const template = await openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent", pglite: sharedPgliteAssets() });
  await template.migrate();
  // Every clone reads the whole dump: it keeps only what a test database uses, without the
  // template databases and any WAL segment but the current one (16 MB each, made ahead of need;
  // PostgreSQL makes them again).
  await dropTemplateDatabases(template);
  const [wal] = await template.query<{ segment: string }>("select pg_walfile_name(pg_current_wal_lsn()) as segment");
  const whole = new Uint8Array(await (await template.dumpDataDir!()).arrayBuffer());
  await template.close();
  const dump = new Blob([tarWithout(whole, (name) => /(^|\/)pg_wal\/[0-9A-F]{24}$/.test(name) && !name.endsWith(wal!.segment))]);
  // Written aside and renamed, so a worker starting at the same time never reads half a file.
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}`;
  writeFileSync(partial, new Uint8Array(await dump.arrayBuffer()));
  renameSync(partial, file);
  return dump;
}

/**
 * Drops PostgreSQL's template0 and template1, a third of a new cluster's size and half its files:
 * no test, and nothing in the service, creates a database on the embedded one.
 */
async function dropTemplateDatabases(database: Database): Promise<void> {
  await database.query("update pg_database set datistemplate = false where datname in ('template0', 'template1')");
  await database.query("drop database template0");
  await database.query("drop database template1");
  await database.query("checkpoint");
}

/**
 * Gives `dataDir` a migrated embedded database (its `pg` directory), copied from one made once
 * per set of migrations and kept beside the template dump. A server or CLI started on it skips
 * creating and migrating a database (about 4 s of CPU each, dozens of times a run); its first
 * start is otherwise the same (the secrets key, the lock, the first-run state are its own). Tests
 * of what a brand-new directory does start on an empty one instead. Returns `dataDir`.
 */
export async function seedDataDir(dataDir: string): Promise<string> {
  const source = await seededPgDir();
  mkdirSync(dataDir, { recursive: true });
  cpSync(source, join(dataDir, "pg"), { recursive: true });
  return dataDir;
}

let seededPg: Promise<string> | undefined;
const seededPgDir = () => (seededPg ??= makeSeededPgDir());

async function makeSeededPgDir(): Promise<string> {
  const dir = join(tmpdir(), "vet-clinic-test-templates", `datadir-${TEMPLATE_KEY}`);
  if (existsSync(join(dir, "PG_VERSION"))) return dir;
  mkdirSync(join(dir, ".."), { recursive: true });
  const scratch = mkdtempSync(`${dir}.partial-`);
  try {
    const database = await openDatabase({ databaseUrl: undefined, dataDir: scratch, pglite: sharedPgliteAssets() });
    await database.migrate();
    // Copied for each server a test starts: without the template databases, half the files to create.
    await dropTemplateDatabases(database);
    await database.close();
    // Renamed whole, so a worker starting at the same time never copies half a directory; when
    // another worker got there first, its copy is used.
    try {
      renameSync(join(scratch, "pg"), dir);
    } catch (error) {
      if (!existsSync(join(dir, "PG_VERSION"))) throw error;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return dir;
}

/** True when `dir` is missing or empty: what a test means by a new data directory. */
export const isNewDataDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/**
 * An embedded database in memory with nothing in it (as initdb leaves it, no migration applied),
 * cloned from a dump made once per test process: for tests of restores and older schemas, which
 * need an empty database and would otherwise pay for initdb (a second or two of CPU) each time.
 */
export async function createEmptyPgliteDatabase(): Promise<Database> {
  emptyPgliteDump ??= (async () => {
    const fresh = await openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent", pglite: sharedPgliteAssets() });
    const dump = new Blob([await (await fresh.dumpDataDir!()).arrayBuffer()]);
    await fresh.close();
    return dump;
  })();
  return openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent", memoryTemplate: await emptyPgliteDump, pglite: sharedPgliteAssets() });
}
let emptyPgliteDump: Promise<Blob> | undefined;

/** An uncompressed tar without the entries `drop` names (each entry's header and blocks kept as they were otherwise). */
function tarWithout(tar: Uint8Array, drop: (name: string) => boolean): Uint8Array {
  const kept: Uint8Array[] = [];
  const field = (header: Uint8Array, from: number, to: number) => new TextDecoder().decode(header.subarray(from, to)).replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((byte) => byte === 0)) {
      kept.push(tar.subarray(at));
      break;
    }
    const prefix = field(header, 345, 500);
    const name = prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100);
    const end = at + 512 + Math.ceil(parseInt(field(header, 124, 136).trim() || "0", 8) / 512) * 512;
    if (!drop(name)) kept.push(tar.subarray(at, end));
    at = end;
  }
  return Buffer.concat(kept);
}

/** Serializes the making of the PostgreSQL template between test processes (parallel workers, other runs). */
const TEMPLATE_LOCK_ID = 724_311_901;
let postgresTemplate: Promise<string> | undefined;

/**
 * PostgreSQL: the name of a migrated template database on the server, made once (per server and
 * set of migrations) and copied by CREATE DATABASE … TEMPLATE for each test database, which takes
 * a fraction of migrating each one. Marked a template only once migrated, so a run that died half
 * way leaves nothing that is used.
 */
export const preparePostgresTemplate = () => (postgresTemplate ??= makePostgresTemplate());

async function makePostgresTemplate(): Promise<string> {
  const name = `vet_test_template_${TEMPLATE_KEY}`;
  const admin = postgres(ADMIN_URL!, { max: 1, onnotice: () => {} });
  const made = async () => (await admin`select 1 from pg_database where datname = ${name} and datistemplate`).length > 0;
  try {
    if (await made()) return name;
    await admin`select pg_advisory_lock(${TEMPLATE_LOCK_ID})`;
    try {
      if (await made()) return name;
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.unsafe(`create database ${name}`);
      const template = await openDatabase({ databaseUrl: urlForDatabase(ADMIN_URL!, name), dataDir: "/nonexistent" });
      try {
        await template.migrate();
      } finally {
        await template.close();
      }
      await admin.unsafe(`alter database ${name} is_template true`);
      return name;
    } finally {
      await admin`select pg_advisory_unlock(${TEMPLATE_LOCK_ID})`;
    }
  } finally {
    await admin.end();
  }
}

export interface TestDatabase extends Database {
  /** For PostgreSQL: the URL of this test's own database (to hand to a server process). */
  url?: string;
  /** Behind a pooler: the direct URL of this test's database. */
  directUrl?: string;
  /** DATABASE_URL (and DATABASE_DIRECT_URL behind a pooler) for a server process on this database. */
  serverEnv?: Record<string, string>;
  /** Drops what was created for this test (the PostgreSQL database) after closing. */
  destroy(): Promise<void>;
}

/**
 * A fresh, migrated database of the kind DATABASE_URL selects: in-memory PGlite by default,
 * or a new PostgreSQL database (dropped by `destroy`) when DATABASE_URL is postgres://; either is
 * a copy of the migrated template.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!POSTGRES_URL) {
    const database = await openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent", memoryTemplate: await preparePgliteTemplate(), pglite: sharedPgliteAssets() });
    return Object.assign(database, { destroy: () => database.close() });
  }
  const name = `vet_test_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
  const template = await preparePostgresTemplate();
  const admin = postgres(ADMIN_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name} template ${template}`);
  await admin.end();
  const url = urlForDatabase(POSTGRES_URL, name);
  const directUrl = POSTGRES_DIRECT_URL ? urlForDatabase(POSTGRES_DIRECT_URL, name) : undefined;
  const database = await openDatabase({ databaseUrl: url, databaseDirectUrl: directUrl, dataDir: "/nonexistent" });
  // Already migrated (the template's copy); this checks that and applies nothing.
  await database.migrate();
  return Object.assign(database, {
    url,
    directUrl,
    serverEnv: { DATABASE_URL: url, ...(directUrl ? { DATABASE_DIRECT_URL: directUrl } : {}) },
    async destroy() {
      await database.close();
      const cleanup = postgres(ADMIN_URL!, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  });
}

/**
 * Runs `fn` on the database a server process used: the test's PostgreSQL database, or its
 * embedded data directory, opened here once the server has stopped (one owner at a time).
 */
export async function readServerDatabase<T>(pg: TestDatabase | undefined, dataDir: string, fn: (database: Database) => Promise<T>): Promise<T> {
  if (pg) return fn(pg);
  const database = await openDatabase({ databaseUrl: undefined, dataDir });
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}
