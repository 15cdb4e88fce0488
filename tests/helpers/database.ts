import postgres from "postgres";
import { openDatabase, type Database } from "../../src/db/client";
import { loadPgliteAssets, type PgliteAssets } from "../../src/db/pglite-assets";

export const POSTGRES_URL = process.env.DATABASE_URL?.startsWith("postgres") ? process.env.DATABASE_URL : undefined;
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
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: "/nonexistent" });
  await database.migrate();
  return Object.assign(database, {
    url: url.toString(),
    async destroy() {
      await database.close();
      const cleanup = postgres(POSTGRES_URL!, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  });
}
