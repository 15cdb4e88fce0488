/**
 * The rest of the MCP surface through the SDK client: resources (the schema describe_schema
 * gives, per table, and each saved report's) and resource templates (a patient's timeline, a
 * table's schema, a report's, by name), prompts (starter analyses and saved reports, whose text
 * arguments are typed and validated), completion of saved reports' enum arguments and of template
 * names, and ping, each within the key's scopes; initialize declares exactly these (no logging:
 * a stateless endpoint has no channel for log notifications). An unknown tool is JSON-RPC -32602.
 */
import { expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

async function sdkClient(key: string) {
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (url, init) => t.app.handle(new Request(String(url), init)),
  });
  const client = new Client({ name: "surface-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

test("resources, prompts, logging, completion and ping, within the key's scopes", async () => {
  const report = await owner.as("POST", "/api/v1/mcp/reports", {
    json: { name: "by_species", title: "Patients of a species", scope: "read", sql: "SELECT count(*) AS n FROM patients WHERE species = :species", parameters: [{ name: "species", type: "string", description: "Species", required: true, enum: ["dog", "cat", "ferret"] }] },
  });
  expect(report.status, report.text).toBe(201);
  const full = await sdkClient((await createKey(owner)).api_key);
  expect(full.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {}, completions: {} });
  expect(full.getServerCapabilities()).not.toHaveProperty("logging");
  await full.ping();

  const resources = (await full.listResources()).resources.map((resource) => resource.uri);
  expect(resources).toEqual(expect.arrayContaining(["clinic://schema", "clinic://schema/tables/visits", "clinic://reports/by_species"]));
  const schema = await full.readResource({ uri: "clinic://schema" });
  const described = await full.callTool({ name: "describe_schema", arguments: {} });
  expect(JSON.parse((schema.contents[0] as { text: string }).text)).toEqual(described.structuredContent as object);
  const reportSchema = JSON.parse(((await full.readResource({ uri: "clinic://reports/by_species" })).contents[0] as { text: string }).text);
  expect(reportSchema.input_schema.properties.species).toBeDefined();
  await expect(full.readResource({ uri: "clinic://reports/nothing" })).rejects.toThrow();

  const prompts = (await full.listPrompts()).prompts.map((prompt) => prompt.name);
  expect(prompts).toEqual(expect.arrayContaining(["monthly_revenue_review", "vaccines_due", "no_shows", "report_by_species"]));
  const review = await full.getPrompt({ name: "monthly_revenue_review", arguments: { month: "2026-01" } });
  expect((review.messages[0]!.content as { text: string }).text).toContain("query_database");

  await expect(full.setLoggingLevel("warning")).rejects.toThrow(/-32601|not found/i);
  const completed = await full.complete({ ref: { type: "ref/prompt", name: "report_by_species" }, argument: { name: "species", value: "c" } });
  expect(completed.completion.values).toEqual(["cat"]);
  await full.close();

  // A key with clinic_context only: no schema, no report, no query prompts.
  const narrow = await sdkClient((await createKey(owner, { scopes: ["clinic_context"] })).api_key);
  expect((await narrow.listResources()).resources).toEqual([]);
  expect((await narrow.listPrompts()).prompts).toEqual([]);
  await expect(narrow.readResource({ uri: "clinic://schema" })).rejects.toThrow();
  expect((await narrow.complete({ ref: { type: "ref/prompt", name: "report_by_species" }, argument: { name: "species", value: "" } })).completion.values).toEqual([]);
  await narrow.close();
});

test("resource templates: a patient's timeline, a table's schema and a report's, completed by name, within the key's scopes", async () => {
  const tutor = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Camila Rojas", phone: "+56911111111" } });
  const patient = await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: tutor.body.id, name: "Luna", species: "dog" } });
  expect(patient.status, patient.text).toBe(201);
  const visit = await owner.as("POST", "/api/v1/visits", { json: { patient_id: patient.body.id, scheduled_at: "2026-01-10T13:00:00Z", reason: "Vacunación anual" } });
  expect(visit.status, visit.text).toBe(201);
  const full = await sdkClient((await createKey(owner)).api_key);
  const templates = (await full.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
  expect(templates).toEqual(["clinic://patients/{patient_id}/timeline", "clinic://schema/tables/{table}", "clinic://reports/{report}"]);
  const timeline = JSON.parse(((await full.readResource({ uri: `clinic://patients/${patient.body.id}/timeline` })).contents[0] as { text: string }).text);
  expect(timeline.patient).toMatchObject({ name: "Luna", species: "dog" });
  expect(timeline.entries).toEqual([expect.objectContaining({ kind: "visit", summary: "scheduled: Vacunación anual" })]);
  await expect(full.readResource({ uri: "clinic://patients/00000000-0000-7000-8000-000000000000/timeline" })).rejects.toThrow();
  await expect(full.readResource({ uri: "clinic://patients/x' OR true --/timeline" })).rejects.toThrow();
  const tables = await full.complete({ ref: { type: "ref/resource", uri: "clinic://schema/tables/{table}" }, argument: { name: "table", value: "pa" } });
  expect(tables.completion.values).toEqual(["patients", "payments"]);
  await full.close();

  const readOnly = await sdkClient((await createKey(owner, { scopes: ["read"] })).api_key);
  expect((await readOnly.listResourceTemplates()).resourceTemplates.map((template) => template.name)).toEqual(["table_schema", "saved_report"]);
  await expect(readOnly.readResource({ uri: `clinic://patients/${patient.body.id}/timeline` })).rejects.toThrow();
  await readOnly.close();
  const narrow = await sdkClient((await createKey(owner, { scopes: ["clinic_context"] })).api_key);
  expect((await narrow.listResourceTemplates()).resourceTemplates).toEqual([]);
  await narrow.close();
});

test("a saved report's prompt passes typed arguments and refuses ones the tool would refuse (-32602)", async () => {
  const report = await owner.as("POST", "/api/v1/mcp/reports", {
    json: {
      name: "recent_species",
      title: "Recent patients of a species",
      scope: "read",
      sql: "SELECT count(*) AS n FROM patients WHERE species = :species AND created_at > now() - make_interval(days => :days)",
      parameters: [
        { name: "species", type: "string", required: true, enum: ["dog", "cat"] },
        { name: "days", type: "integer", required: true, min: 1, max: 365 },
      ],
    },
  });
  expect(report.status, report.text).toBe(201);
  const client = await sdkClient((await createKey(owner)).api_key);
  const prompt = await client.getPrompt({ name: "report_recent_species", arguments: { species: "cat", days: "30" } });
  const text = (prompt.messages[0]!.content as { text: string }).text;
  expect(text).toContain('{"species":"cat","days":30}');
  const args = JSON.parse(/arguments: (\{.*\}),/.exec(text)![1]!);
  const called = await client.callTool({ name: "report_recent_species", arguments: args });
  expect(called.isError, JSON.stringify(called)).toBeFalsy();
  const refused: Record<string, string>[] = [{ species: "lizard", days: "30" }, { species: "cat", days: "thirty" }, { species: "cat", days: "0" }, { species: "cat" }];
  for (const bad of refused) {
    await expect(client.getPrompt({ name: "report_recent_species", arguments: bad })).rejects.toMatchObject({ code: -32602 });
  }
  await client.close();
});

test("an unknown tool is JSON-RPC -32602 on both paths, still counted", async () => {
  const key = (await createKey(owner)).api_key;
  const client = await sdkClient(key);
  await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toMatchObject({ code: -32602 });
  await client.close();
  const direct = await t.request<{ error?: { code: number; message: string; data?: { code: string } }; result?: unknown }>("POST", "/mcp", {
    token: key,
    json: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "no_such_tool", arguments: {} } },
    headers: { accept: "application/json, text/event-stream" },
  });
  expect(direct.status, direct.text).toBe(200);
  expect(direct.body.result).toBeUndefined();
  expect(direct.body.error).toMatchObject({ code: -32602, message: "Unknown tool: no_such_tool", data: { code: "TOOL_NOT_FOUND" } });
  await t.context.mcp.flush();
  const logged = await t.database.query<{ n: number }>("select count(*)::int as n from mcp_usage_log where tool = 'no_such_tool' and outcome = 'denied'");
  expect(logged[0]!.n).toBe(2);
});
