/**
 * The floor with the database: `query_database` as a bare Bun.serve with this service's own
 * guard and executor (the read-only transaction, the clinic and role settings, the clinic
 * views, prepared statements) and nothing else: no framework, key, quota or usage log. The
 * argument: `{"databaseUrl": …, "clinicId": …}`.
 */
import { loadConfig } from "../../src/config";
import { openDatabase } from "../../src/db/client";
import { SqlEngine } from "../../src/modules/mcp/sql-guard/engine";
import { serveBareMcp } from "./bare-mcp";

const { databaseUrl, clinicId } = JSON.parse(process.argv[2]!) as { databaseUrl: string; clinicId: string };
const config = loadConfig({ DATABASE_URL: databaseUrl, JWT_SECRET: "bench-floor-secret-of-at-least-32-bytes" });
const engine = new SqlEngine(await openDatabase({ databaseUrl, dataDir: config.dataDir, poolSizes: config.poolSizes }), config);

serveBareMcp(async (params) => {
  const guarded = engine.guard(String(params.arguments?.sql ?? ""));
  if (!guarded.ok) return JSON.stringify({ isError: true, content: [{ type: "text", text: guarded.message }] });
  const text = JSON.stringify(await engine.run(clinicId, guarded));
  return `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}}`;
});
