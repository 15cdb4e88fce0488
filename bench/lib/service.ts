import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDemo, type DemoResult } from "../../src/cli/seed";
import { openDatabase, type Database } from "../../src/db/client";
import { systemClock } from "../../src/lib/clock";
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

/** Seeds the demo clinic and lifts its quota and burst cap: the benchmarks measure speed, not the limits. */
export async function seedUnlimitedDemo(database: Database, size: "small" | "large" = "small"): Promise<DemoResult> {
  const demo = await seedDemo(database, systemClock, size);
  await database.query("UPDATE clinics SET plan = 'enterprise', burst_per_minute = 1000000000 WHERE id = $1", [demo.clinic_id]);
  await database.query("UPDATE api_keys SET rate_limit_per_day = 1000000000 WHERE clinic_id = $1", [demo.clinic_id]);
  await database.query("ANALYZE");
  return demo;
}

/** A new embedded data directory holding that demo clinic (`large`: with about a million visits), closed again so that a server can own it. */
export async function demoDataDir(name: string, size: "small" | "large" = "small"): Promise<{ dataDir: string; demo: DemoResult }> {
  const dataDir = mkdtempSync(join(tmpdir(), `vet-clinic-bench-${name}-`));
  const database = await openDatabase({ dataDir });
  try {
    await database.migrate();
    return { dataDir, demo: await seedUnlimitedDemo(database, size) };
  } finally {
    await database.close();
  }
}

/**
 * One of the small servers in bench/lib (bare-server.ts, bare-elysia.ts, mcp-replayer.ts,
 * bare-mcp-database.ts), given its one argument; resolves once it prints its address. `stop`
 * resolves once the process has exited (a data directory it owned is free again).
 */
export async function startScript(script: string, argument: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = Bun.spawn(["bun", join(import.meta.dir, script), argument], { stdout: "pipe" });
  const { value } = await child.stdout.getReader().read();
  const url = JSON.parse(new TextDecoder().decode(value).trim().split("\n")[0]!).base_url as string;
  return {
    url,
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}
