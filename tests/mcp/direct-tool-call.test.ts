import { expect, test } from "bun:test";
import type { TestApp, TestResponse } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey, usageRows, type CreatedKey, type QueryResult } from "./helpers";

// A single tools/call is answered without building an SDK server; a batch of one goes through the
// SDK. Both must send the client the same answer and leave the same usage row.
let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

const HEADERS = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
/** A JSON-RPC answer with a result: for tools/call, the tool's content (isError when it refused). */
interface RpcResult<Result> {
  jsonrpc: "2.0";
  id: number | string;
  result: Result;
}
interface ToolCallResult {
  isError?: boolean;
  structuredContent?: QueryResult;
  content: { type: string; text: string }[];
}
/** A JSON-RPC error answer. */
interface RpcError {
  jsonrpc: "2.0";
  id: number | string | null;
  error: { code: number; message: string; data?: unknown };
}
const call = (id: number | string, name: string, args?: unknown) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, ...(args === undefined ? {} : { arguments: args }) } });

/** The answer with what differs per request (request ids, elapsed times) blanked, in the text copy too. */
function comparable(r: TestResponse): unknown {
  return JSON.parse(r.text.replace(/(request_id\\?":\\?")[^"\\]+/g, "$1…").replace(/(elapsed_ms\\?":)[0-9.]+/g, (_, name) => `${name}0`));
}

async function bothWays(key: CreatedKey, name: string, args?: unknown) {
  const direct = await t.request<RpcResult<ToolCallResult>>("POST", "/mcp", { token: key.api_key, json: call(7, name, args), headers: HEADERS });
  const throughSdk = await t.request("POST", "/mcp", { token: key.api_key, json: [call(7, name, args)], headers: HEADERS });
  expect(direct.status, direct.text).toBe(throughSdk.status);
  expect(direct.headers.get("content-type")).toBe(throughSdk.headers.get("content-type"));
  // The app's own headers reach both: the direct answer is text Elysia sends with them.
  expect(direct.headers.get("x-request-id"), direct.text).toMatch(/^[0-9a-f-]{36}$/);
  expect(throughSdk.headers.get("x-request-id"), throughSdk.text).toMatch(/^[0-9a-f-]{36}$/);
  expect(comparable(direct)).toEqual(comparable(throughSdk));
  return direct;
}

test("query results, guard refusals, unknown tools, missing scopes and bad input: the same answer both ways", async () => {
  const key = await createKey(owner, { scopes: ["query", "clinic_context"] });
  const ok = await bothWays(key, "query_database", { sql: "SELECT count(*) AS n FROM tutors" });
  expect(ok.body.result.structuredContent!.rows, ok.text).toEqual([{ n: 0 }]);
  expect(JSON.parse(ok.body.result.content[0]!.text)).toEqual(ok.body.result.structuredContent);
  const blocked = await bothWays(key, "query_database", { sql: "DELETE FROM tutors" });
  expect(blocked.body.result.isError, blocked.text).toBe(true);
  expect(blocked.body.result.structuredContent).toBeUndefined();
  expect(JSON.parse(blocked.body.result.content[0]!.text).code).toBe("SQL_GUARD_BLOCKED");
  await bothWays(key, "no_such_tool", {});
  await bothWays(key, "describe_schema", {});
  await bothWays(key, "query_database", { sql: 42 });
  await bothWays(key, "get_clinic_context");
  const rows = await usageRows(t, key.id);
  const outcomes = rows.map((row) => `${row.tool} ${row.outcome}`);
  // Each call twice, in order: the direct answer and the SDK's left the same rows.
  expect(outcomes).toEqual(["query_database ok", "query_database ok", "query_database blocked", "query_database blocked", "no_such_tool denied", "no_such_tool denied", "describe_schema denied", "describe_schema denied", "query_database error", "query_database error", "get_clinic_context ok", "get_clinic_context ok"]);
});

test("what the direct path does not take is still answered by the SDK: wrong Accept, wrong media type, unknown protocol version, odd ids and arguments", async () => {
  const key = await createKey(owner);
  const notAcceptable = await t.request("POST", "/mcp", { token: key.api_key, json: call(1, "get_clinic_context"), headers: { accept: "application/json" } });
  expect(notAcceptable.status, notAcceptable.text).toBe(406);
  const badVersion = await t.request("POST", "/mcp", { token: key.api_key, json: call(1, "get_clinic_context"), headers: { ...HEADERS, "mcp-protocol-version": "1999-01-01" } });
  expect(badVersion.status, badVersion.text).toBe(400);
  const arrayArguments = await t.request<RpcError>("POST", "/mcp", { token: key.api_key, json: call(1, "get_clinic_context", [1]), headers: HEADERS });
  expect(arrayArguments.body.error?.message, arrayArguments.text).toContain("expected record");
  const stringId = await t.request<RpcResult<unknown>>("POST", "/mcp", { token: key.api_key, json: call("a-string-id", "get_clinic_context"), headers: HEADERS });
  expect(stringId.body.id, stringId.text).toBe("a-string-id");
  const noKey = await t.request("POST", "/mcp", { json: call(1, "get_clinic_context"), headers: HEADERS });
  expect(noKey.status, noKey.text).toBe(401);
});
