/** Tool lists follow the key's scopes, and their schemas are plain JSON Schema the SDK accepts silently. */
import { expect, spyOn, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ErrorBody, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { createKey, invoke, usageRows, type ToolList } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

async function sdkClient(key: string) {
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (url, init) => t.app.handle(new Request(String(url), init)),
  });
  const client = new Client({ name: "tool-lists-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

test("a key sees only the tools its scopes allow, on both lists; an unlisted tool is still 403 and counted", async () => {
  const key = await createKey(owner, { scopes: ["clinic_context"] });
  const listed = await t.request<ToolList>("GET", "/mcp/tools", { token: key.api_key });
  expect(listed.body.tools.map((tool: { name: string }) => tool.name)).toEqual(["get_clinic_context"]);
  const client = await sdkClient(key.api_key);
  expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["get_clinic_context"]);
  await client.close();
  const denied = await invoke<ErrorBody>(t, key.api_key, "query_database", { sql: "select 1" });
  expect(denied.status, denied.text).toBe(403);
  expect(denied.body.code).toBe("INSUFFICIENT_SCOPE");
  expect((await usageRows(t, key.id)).map((row) => row.outcome)).toEqual(["denied"]);
  const all = await createKey(owner, { scopes: ["read", "query", "clinic_context"] });
  const everything = await t.request<ToolList>("GET", "/mcp/tools", { token: all.api_key });
  expect(everything.body.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(["describe_schema", "find_available_slots", "get_clinic_context", "query_database"]);
});

test("the SDK client lists and calls every tool without a single warning; schemas use plain integers", async () => {
  const key = await createKey(owner, { scopes: ["read", "query", "clinic_context"] });
  const warn = spyOn(console, "warn");
  const error = spyOn(console, "error");
  try {
    const client = await sdkClient(key.api_key);
    const { tools } = await client.listTools();
    expect(JSON.stringify(tools)).not.toContain('"format":"integer"');
    const type = await owner.as<{ id: string }>("POST", "/api/v1/appointment-types", { json: { name: "Consulta", duration_minutes: 30 } });
    const argsOf: Record<string, Record<string, unknown>> = { query_database: { sql: "select count(*) as n from tutors" }, find_available_slots: { appointment_type_id: type.body.id, from: "2026-01-19", to: "2026-01-20" } };
    for (const tool of tools) {
      const args = argsOf[tool.name] ?? {};
      const result = await client.callTool({ name: tool.name, arguments: args });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
    }
    await client.close();
    expect(warn.mock.calls.map((call) => call.join(" ")), "console.warn").toEqual([]);
    expect(error.mock.calls.map((call) => call.join(" ")), "console.error").toEqual([]);
  } finally {
    warn.mockRestore();
    error.mockRestore();
  }
});
