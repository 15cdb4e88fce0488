import postgres from "postgres";
import { openDatabase, type Database } from "../../src/db/client";
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

/** A migrated PGlite data directory, made once per test process and cloned for each database. */
let pgliteTemplate: Promise<Blob | File> | undefined;
/** PGlite's modules, compiled once per test process for every in-memory database. */
let pgliteModules: Promise<PgliteAssets> | undefined;
export const sharedPgliteAssets = () => (pgliteModules ??= loadPgliteAssets());

/** Builds the template ahead (the preload does, so no test's hook pays the ~5 s of migrations). */
export const preparePgliteTemplate = () => (pgliteTemplate ??= templateDump());

async function templateDump(): Promise<Blob | File> {
  const template = await openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent", pglite: sharedPgliteAssets() });
  await template.migrate();
  const dump = await template.dumpDataDir!();
  await template.close();
  return dump;
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
 * or a new PostgreSQL database (dropped by `destroy`) when DATABASE_URL is postgres://.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!POSTGRES_URL) {
    const database = await openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent", memoryTemplate: await preparePgliteTemplate(), pglite: sharedPgliteAssets() });
    return Object.assign(database, { destroy: () => database.close() });
  }
  const name = `vet_test_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
  const admin = postgres(ADMIN_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = urlForDatabase(POSTGRES_URL, name);
  const directUrl = POSTGRES_DIRECT_URL ? urlForDatabase(POSTGRES_DIRECT_URL, name) : undefined;
  const database = await openDatabase({ databaseUrl: url, databaseDirectUrl: directUrl, dataDir: "/nonexistent" });
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
