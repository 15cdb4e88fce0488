/**
 * The floor with the database: `query_database` as a bare Bun.serve with this service's own
 * guard and executor (the read-only transaction, the clinic and role settings, the clinic
 * views, prepared statements) and nothing else: no framework, key, quota or usage log. The
 * argument: `{"databaseUrl": …, "clinicId": …}`, or `{"dataDir": …, "clinicId": …}` for the
 * embedded database (then this process owns the data directory).
 */
import { loadConfig } from "../../src/config";
import { openDatabase } from "../../src/db/client";
import { SqlEngine } from "../../src/modules/mcp/sql-guard/engine";
import { serveBareMcp } from "./bare-mcp";

const { databaseUrl, dataDir, clinicId } = JSON.parse(process.argv[2]!) as { databaseUrl?: string; dataDir?: string; clinicId: string };
const config = loadConfig({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, JWT_SECRET: "bench-floor-secret-of-at-least-32-bytes" });
const database = await openDatabase({ databaseUrl, dataDir: config.dataDir, poolSizes: config.poolSizes });
const engine = new SqlEngine(database, config);

serveBareMcp(async (params) => {
  const guarded = engine.guard(String(params.arguments?.sql ?? ""));
  if (!guarded.ok) return JSON.stringify({ isError: true, content: [{ type: "text", text: guarded.message }] });
  const text = JSON.stringify(await engine.run(clinicId, guarded));
  return `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}}`;
}, () => database.close());
