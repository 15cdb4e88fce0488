import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Database } from "../../src/db/client";
import { createTestDatabase, POSTGRES_URL, readServerDatabase, type TestDatabase } from "./database";

/**
 * Where a test file's server processes keep their data: a fresh embedded data directory, or a
 * fresh PostgreSQL database when DATABASE_URL is one; both removed after the file's tests.
 */
export function useServerStore(name: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `vet-clinic-${name}-`));
  let pg: TestDatabase | undefined;
  beforeAll(async () => {
    if (POSTGRES_URL) pg = await createTestDatabase();
  }, 30_000);
  afterAll(async () => {
    await pg?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);
  return {
    /** The PostgreSQL database, or undefined on the embedded one. */
    get pg() {
      return pg;
    },
    /** A server's environment: `settings`, the data directory, and the database URLs as a deployment has them (behind a pooler, its direct URL too). */
    env: (settings: Record<string, string> = {}) => ({ DATA_DIR: dataDir, ...settings, ...(pg?.serverEnv ?? {}) }),
    /** Runs `fn` on the database the servers used (the embedded one once they have stopped: one owner at a time). */
    read: <T>(fn: (database: Database) => Promise<T>) => readServerDatabase(pg, dataDir, fn),
  };
}
