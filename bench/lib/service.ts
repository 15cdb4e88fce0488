import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/client";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../../tests/helpers/database";
import { call, startServer, type ServerProcess } from "../../tests/helpers/server-process";

export interface BenchService {
  server: ServerProcess;
  apiKey: string;
  ownerToken: string;
  /** Extra env for any further server process on the same data. */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * A service process with one clinic, its owner, and an API key whose quota and burst cap are
 * out of the way (enterprise plan), on a fresh embedded data directory or PostgreSQL database.
 */
export async function startBenchService(): Promise<BenchService> {
  let pg: TestDatabase | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "vet-clinic-bench-"));
  if (POSTGRES_URL) pg = await createTestDatabase();
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: "warn", ...(process.env.BENCH_FLUSH_MS ? { QUOTA_FLUSH_MS: process.env.BENCH_FLUSH_MS } : {}), ...(pg?.url ? { DATABASE_URL: pg.url } : {}) };
  let server = await startServer(env);
  const owner = await call(server.baseUrl, "POST", "/api/v1/auth/register", {
    json: { email: "bench@clinic.test", password: "a long password", name: "Bench", clinic_name: "Bench" },
  });
  const key = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", {
    token: owner.body.access_token,
    json: { name: "bench", scopes: ["read", "query", "clinic_context"], rate_limit_per_day: 1_000_000 },
  });
  // The embedded database has one owner process at a time: stop, lift the burst cap, restart.
  await server.stop();
  const database = pg ?? (await openDatabase({ databaseUrl: undefined, dataDir }));
  await database.query("update clinics set plan = 'enterprise', burst_per_minute = 1000000000");
  if (!pg) await database.close();
  server = await startServer(env);
  return {
    server,
    apiKey: key.body.api_key,
    ownerToken: owner.body.access_token,
    env,
    async cleanup() {
      await server.stop();
      await pg?.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
