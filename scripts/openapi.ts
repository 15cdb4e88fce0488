/**
 * Writes the OpenAPI document the app serves at /openapi.json to a file (default
 * build/openapi.json), for linters and client generators: `bun scripts/openapi.ts [path]`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createApp } from "../src/app";
import { DEFAULT_LIMITS } from "../src/config";
import { openDatabase } from "../src/db/client";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";

const out = process.argv[2] ?? "build/openapi.json";
// The document depends only on the routes; an in-memory database that is never migrated will do.
const database = await openDatabase({ databaseUrl: "memory://", dataDir: "/nonexistent" });
const { context } = createApp({
  database,
  clock: new ManualClock(),
  logger: silentLogger,
  config: {
    port: 0, host: "127.0.0.1", databaseUrl: "memory://", dataDir: "/nonexistent", jwtSecret: "x".repeat(32), secretsKey: "x".repeat(32), siiTestCafKeysFile: null, cookieSecure: true, trustedProxies: [], registration: "closed",
    quotaFlushMs: 60_000, queryTimeoutMs: 5000, queryMaxRows: 1000, queryMaxCost: 1_000_000, logLevel: "silent",
    maxBodyBytes: 1024 * 1024, mcpAllowedOrigins: [], corsOrigins: [], limits: DEFAULT_LIMITS,
    backup: { dir: "/nonexistent/backups", intervalMs: null, keep: 7 },
    poolSizes: { main: 10, query: 4 },
    memorySoftLimitMb: 0,
    webhooks: { dispatch: false, retryScheduleMs: [0], allowedNetworks: [], allowHttp: false, timeoutMs: 15_000, dueDays: 7, dueHour: 8 },
  },
});
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(context.apiDocument.json, null, 2) + "\n");
await context.lifecycle.beforeClose();
await database.close();
console.log(`wrote ${out}`);
