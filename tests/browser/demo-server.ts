/**
 * A server process on a fresh embedded data directory holding the demo clinic, for the console's
 * screenshots and its budget benchmark. The demo's owner login and MCP key come back with it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDemo } from "../../src/cli/seed";
import { openDatabase } from "../../src/db/client";
import { systemClock } from "../../src/lib/clock";
import { startServer, type ServerProcess } from "../helpers/server-process";

export interface DemoServer {
  base: string;
  server: ServerProcess;
  owner: { email: string; password: string };
  /** Every demo login (owner, vets, reception) with its role. */
  logins: { role: string; email: string; password: string; name: string }[];
  mcpKey: string;
  stop(): Promise<void>;
}

export async function startDemoServer(): Promise<DemoServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "vet-demo-"));
  const database = await openDatabase({ dataDir });
  await database.migrate();
  const demo = await seedDemo(database, systemClock, "small");
  await database.close();
  const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn" });
  return {
    base: server.baseUrl.replace("localhost", "127.0.0.1"),
    server,
    owner: demo.owner,
    logins: demo.logins,
    mcpKey: demo.mcp_key,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Some assistant traffic for the usage charts: answered calls, a blocked statement, a denied tool. */
export async function assistantTraffic(demo: DemoServer): Promise<void> {
  const invoke = (tool: string, input: unknown) =>
    fetch(`${demo.base}/mcp/tools/${tool}/invoke`, { method: "POST", headers: { authorization: `Bearer ${demo.mcpKey}`, "content-type": "application/json" }, body: JSON.stringify(input) }).then((r) => r.text());
  for (let i = 0; i < 6; i++) await invoke("get_clinic_context", {});
  await invoke("query_database", { sql: "select status, count(*) from visits group by status" });
  await invoke("query_database", { sql: "select name, phone from tutors order by name limit 5" });
  await invoke("query_database", { sql: "delete from invoices" });
  await invoke("query_database", { sql: "select * from pg_shadow" });
  await invoke("describe_schema", {});
}
