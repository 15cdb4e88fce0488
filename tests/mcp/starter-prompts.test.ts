/**
 * The starter prompts ask for what today's tables hold: each one's query, as the prompt hands it
 * to the model, runs through query_database on the demo clinic and finds rows. Arguments that
 * would be written into the query are checked first (-32602).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { seedDemo } from "../../src/cli/seed";
import { STARTER_PROMPTS } from "../../src/modules/mcp/surface";
import { createTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
let client: Client;
beforeAll(async () => {
  t = await createTestApp();
  const demo = await seedDemo(t.database, t.clock, "small");
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${demo.mcp_key}` } },
    fetch: (url, init) => t.app.handle(new Request(String(url), init)),
  });
  client = new Client({ name: "starter-prompts", version: "1.0.0" });
  await client.connect(transport);
}, 60_000);
afterAll(async () => {
  await client?.close();
  await t?.close();
});

const day = (offsetDays: number) => new Date(t.clock.now().getTime() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** Arguments within the demo clinic's two months of history. */
const ARGUMENTS: Record<string, () => Record<string, string>> = {
  monthly_revenue_review: () => ({ month: day(-20).slice(0, 7) }),
  vaccines_due: () => ({ weeks: "4" }),
  no_shows: () => ({ from: day(-60), to: day(0) }),
};

test("every starter prompt is tested here", () => {
  expect(STARTER_PROMPTS.map((prompt) => prompt.name).sort()).toEqual(Object.keys(ARGUMENTS).sort());
});

test.each(STARTER_PROMPTS.map((prompt) => [prompt.name]))("%s: the query it asks for runs on the demo clinic and finds rows", async (name) => {
  const prompt = await client.getPrompt({ name, arguments: ARGUMENTS[name]!() });
  const text = (prompt.messages[0]!.content as { text: string }).text;
  const sql = /```sql\n([\s\S]+?)\n```/.exec(text)?.[1];
  expect(sql, text).toBeString();
  const result = await client.callTool({ name: "query_database", arguments: { sql } });
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect((result.structuredContent as { row_count: number }).row_count).toBeGreaterThan(0);
});

test.each([
  ["monthly_revenue_review", { month: "2026-13" }],
  ["monthly_revenue_review", { month: "2026-01'; --" }],
  ["vaccines_due", { weeks: "x" }],
  ["vaccines_due", { weeks: "99" }],
  ["no_shows", { from: "2026-02-01", to: "2026-01-01" }],
  ["no_shows", { from: "yesterday", to: "2026-01-01" }],
])("%s refuses %j with -32602", async (name, args) => {
  await expect(client.getPrompt({ name, arguments: args })).rejects.toMatchObject({ code: -32602 });
});
