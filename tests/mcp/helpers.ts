import { expect } from "bun:test";
import type { ApiKeyWithSecretView } from "../../src/modules/mcp-keys/model";
import type { QueryResultSchema } from "../../src/modules/mcp/tools/query-database";
import type { TestApp, TestResponse } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";

export interface CreatedKey {
  id: string;
  api_key: string;
  key_prefix: string;
  scopes: string[];
  rate_limit_per_day: number;
  burst_per_minute: number;
}

export async function createKey(owner: ClinicSession, body: Record<string, unknown> = {}): Promise<CreatedKey> {
  const r = await owner.as<ApiKeyWithSecretView>("POST", "/api/v1/mcp/keys", { json: { name: "integration", scopes: ["read", "query", "clinic_context"], ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** query_database's (and every saved report's) result; each row maps a column name to its value. */
export type QueryResult = Omit<typeof QueryResultSchema.static, "rows"> & { rows: Record<string, unknown>[] };

/** GET /mcp/tools (ToolInfo in src/modules/mcp/index.ts). */
export interface ToolList {
  tools: { name: string; title: string; description: string; scope: string; input_schema: Record<string, unknown>; output_schema: Record<string, unknown> }[];
}

export const invoke = <Body = unknown>(t: TestApp, key: string, tool: string, input: unknown = {}): Promise<TestResponse<Body>> =>
  t.request<Body>("POST", `/mcp/tools/${tool}/invoke`, { token: key, json: input });

/** The quota count the database holds for a key today (after a flush). */
export async function storedQuota(t: TestApp, keyId: string, day = t.clock.now().toISOString().slice(0, 10)): Promise<number> {
  const [row] = await t.database.query<{ count: number }>("select count from quota_counters where api_key_id = $1 and day = $2", [keyId, day]);
  return row?.count ?? 0;
}

export async function usageRows(t: TestApp, keyId: string) {
  await t.context.mcp.flush();
  return t.database.query<{ tool: string; status_code: number; outcome: string; reason: string | null; sql_text: string | null }>(
    "select tool, status_code, outcome, reason, sql_text from mcp_usage_log where api_key_id = $1 order by created_at, id",
    [keyId],
  );
}
