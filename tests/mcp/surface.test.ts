/**
 * The rest of the MCP surface through the SDK client: resources (the schema describe_schema
 * gives, per table, and each saved report's), prompts (starter analyses and saved reports),
 * logging/setLevel, completion of saved reports' enum arguments and ping, each within the key's
 * scopes; initialize declares exactly these.
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
  expect(full.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {}, logging: {}, completions: {} });
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

  await full.setLoggingLevel("warning");
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
