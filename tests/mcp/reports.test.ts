/**
 * Saved reports: an owner publishes a parameterized SELECT, every MCP key of the clinic with its
 * scope sees it as the tool report_<name>, and calls it with typed arguments that are bound,
 * never spliced, through the same guard, executor, quota and usage log as query_database.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTestApp, type ErrorBody, type Refusal, type TestApp, type ValidationDetails } from "../helpers/app";
import { addMember, type ClinicSession } from "../helpers/clinic";
import type { CursorPageBody } from "../../src/http/pagination";
import type { ReportView } from "../../src/modules/mcp-reports/model";
import { guardSql } from "../../src/modules/mcp/sql-guard/guard";
import type { TutorView } from "../../src/modules/tutors/model";
import { ADVERSARIAL } from "../sql-guard/adversarial-queries";
import { createKey, invoke, usageRows, type QueryResult, type ToolList } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, other } = made), { otherClinic: true });
beforeAll(async () => {
  for (const [name, species] of [["Luna", "dog"], ["Michi", "cat"], ["Rocky", "dog"]] as const) {
    const tutor = await owner.as<TutorView>("POST", "/api/v1/tutors", { json: { name: `Tutor of ${name}`, phone: "+56911112222" } });
    const patient = await owner.as("POST", "/api/v1/patients", { json: { tutor_id: tutor.body.id, name, species } });
    expect(patient.status, patient.text).toBe(201);
  }
  const foreign = await other.as<TutorView>("POST", "/api/v1/tutors", { json: { name: "Foreign tutor", phone: "+56933334444" } });
  await other.as("POST", "/api/v1/patients", { json: { tutor_id: foreign.body.id, name: "Foreign dog", species: "dog" } });
});

const PATIENTS_BY_SPECIES = {
  name: "patients_by_species",
  title: "Patients of one species",
  description: "Names of the clinic's patients of a species",
  sql: "SELECT name FROM patients WHERE species = :species AND (:min_weight IS NULL OR weight_grams >= :min_weight) ORDER BY name LIMIT :limit",
  parameters: [
    { name: "species", type: "string", description: "The species", required: true, enum: ["dog", "cat", "bird", "Robert'); DROP TABLE tutors; --"] },
    { name: "min_weight", type: "integer", description: "Grams", min: 0, max: 200000 },
    { name: "limit", type: "integer", description: "At most this many", default: 10, min: 1, max: 100 },
  ],
};

async function saveReport(session: ClinicSession, body: Record<string, unknown>) {
  const r = await session.as<ReportView>("POST", "/api/v1/mcp/reports", { json: body });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

const reportCount = async (clinicId: string) =>
  Number((await t.database.query<{ n: number }>("select count(*)::int as n from mcp_reports where clinic_id = $1", [clinicId]))[0]!.n);

async function sdkClient(key: string) {
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: (url, init) => t.app.handle(new Request(String(url), init)),
  });
  const client = new Client({ name: "reports-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

test("life cycle: create, read, list, change (version + 1), delete; the tool follows each step", async () => {
  const created = await saveReport(owner, PATIENTS_BY_SPECIES);
  expect(created).toMatchObject({ name: "patients_by_species", tool_name: "report_patients_by_species", version: 1, scope: "read", log_arguments: false });
  expect(created.checked_sql).toContain("mcp_read.patients WHERE clinic_id = $1");
  expect(created.checked_sql).toContain("CAST($2 AS text)");
  const read = await owner.as("GET", `/api/v1/mcp/reports/${created.id}`);
  expect(read.body, read.text).toEqual(created);
  const listed = await owner.as<CursorPageBody<ReportView>>("GET", "/api/v1/mcp/reports");
  expect(listed.body.data.map((r: { name: string }) => r.name), listed.text).toContain("patients_by_species");

  const key = await createKey(owner, { scopes: ["read"] });
  const first = await invoke<QueryResult>(t, key.api_key, "report_patients_by_species", { species: "dog" });
  expect(first.status, first.text).toBe(200);
  expect(first.body.rows, first.text).toEqual([{ name: "Luna" }, { name: "Rocky" }]);

  const changed = await owner.as("PATCH", `/api/v1/mcp/reports/${created.id}`, { json: { sql: "SELECT upper(name) AS name FROM patients WHERE species = :species AND (:min_weight IS NULL OR weight_grams >= :min_weight) ORDER BY name LIMIT :limit", title: "Shouted names" } });
  expect(changed.status, changed.text).toBe(200);
  expect(changed.body).toMatchObject({ version: 2, title: "Shouted names" });
  const second = await invoke<QueryResult>(t, key.api_key, "report_patients_by_species", { species: "dog", limit: 1 });
  expect(second.body.rows, second.text).toEqual([{ name: "LUNA" }]);

  expect((await owner.as("DELETE", `/api/v1/mcp/reports/${created.id}`)).status).toBe(204);
  expect((await owner.as("GET", `/api/v1/mcp/reports/${created.id}`)).status).toBe(404);
  const gone = await invoke<ErrorBody>(t, key.api_key, "report_patients_by_species", { species: "dog" });
  expect(gone.status, gone.text).toBe(404);
  expect(gone.body.code).toBe("TOOL_NOT_FOUND");
  const tools = await t.request<ToolList>("GET", "/mcp/tools", { token: key.api_key });
  expect(tools.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("report_patients_by_species");
});

test("a real SDK client discovers the report with a typed input schema and calls it; the structured result fits the output schema", async () => {
  await saveReport(owner, { ...PATIENTS_BY_SPECIES, name: "sdk_patients" });
  const key = await createKey(owner, { scopes: ["read"] });
  const client = await sdkClient(key.api_key);
  const tool = (await client.listTools()).tools.find((candidate) => candidate.name === "report_sdk_patients");
  expect(tool?.inputSchema).toEqual({
    type: "object",
    additionalProperties: false,
    required: ["species"],
    properties: {
      species: { description: "The species", anyOf: [{ const: "dog", type: "string" }, { const: "cat", type: "string" }, { const: "bird", type: "string" }, { const: "Robert'); DROP TABLE tutors; --", type: "string" }] },
      min_weight: { type: "integer", minimum: 0, maximum: 200000, description: "Grams" },
      limit: { type: "integer", minimum: 1, maximum: 100, description: "At most this many", default: 10 },
    },
  });
  expect(tool?.outputSchema?.properties).toHaveProperty("rows");
  // The SDK client checks structuredContent against the tool's output schema.
  const result = await client.callTool({ name: "report_sdk_patients", arguments: { species: "cat" } });
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  expect((result.structuredContent as { rows: unknown[] }).rows).toEqual([{ name: "Michi" }]);
  await client.close();
});

describe("arguments are data, never SQL", () => {
  let key: string;
  beforeAll(async () => {
    await saveReport(owner, {
      name: "echo",
      title: "Echo",
      sql: "SELECT :text AS text, :count AS count, :ratio AS ratio, :flag AS flag, :day AS day, :at AS at, (SELECT count(*) FROM tutors) AS tutors",
      parameters: [
        { name: "text", type: "string" },
        { name: "count", type: "integer" },
        { name: "ratio", type: "number" },
        { name: "flag", type: "boolean" },
        { name: "day", type: "date" },
        { name: "at", type: "timestamp" },
      ],
    });
    key = (await createKey(owner, { scopes: ["read"] })).api_key;
  });

  test.each([
    "'; DROP TABLE tutors; --",
    "1' OR '1'='1",
    "$1",
    ":count",
    "') UNION SELECT password_hash FROM users --",
    "\\'; SELECT pg_sleep(10); --",
  ])("the string %j comes back as itself and changes nothing", async (text) => {
    const r = await invoke<QueryResult>(t, key, "report_echo", { text });
    expect(r.status, r.text).toBe(200);
    expect(r.body.rows, r.text).toEqual([{ text, count: null, ratio: null, flag: null, day: null, at: null, tutors: 3 }]);
  });

  test("each type is bound as itself", async () => {
    const r = await invoke<QueryResult>(t, key, "report_echo", { text: "x", count: 9007199254740991, ratio: 1.5, flag: true, day: "2026-02-28", at: "2026-03-01T12:00:00-03:00" });
    expect(r.body.rows, r.text).toEqual([{ text: "x", count: 9007199254740991, ratio: "1.5", flag: true, day: "2026-02-28", at: "2026-03-01T15:00:00Z", tutors: 3 }]);
  });

  test.each([
    [{ count: "5" }, "body.count"],
    [{ count: 1.5 }, "body.count"],
    [{ count: [1] }, "body.count"],
    [{ text: ["a", "b"] }, "body.text"],
    [{ text: { sql: "x" } }, "body.text"],
    [{ flag: "true" }, "body.flag"],
    [{ day: "2026-02-30" }, "body.day"],
    [{ day: "2026-01-01'; DROP TABLE tutors; --" }, "body.day"],
    [{ at: "2026-01-01T00:00:00" }, "body.at"],
    [{ ratio: "1; DROP TABLE tutors" }, "body.ratio"],
    [{ unknown: 1 }, "body.unknown"],
  ])("%j is refused with 422 naming %s", async (input, path) => {
    const r = await invoke<Refusal<ValidationDetails>>(t, key, "report_echo", input);
    expect(r.status, r.text).toBe(422);
    expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(path);
  });

  test("bounds, enums and required arguments are enforced", async () => {
    await saveReport(owner, { ...PATIENTS_BY_SPECIES, name: "bounded" });
    for (const [input, path] of [[{}, "body.species"], [{ species: "horse" }, "body.species"], [{ species: "dog", limit: 0 }, "body.limit"], [{ species: "dog", limit: 101 }, "body.limit"]] as const) {
      const r = await invoke<Refusal<ValidationDetails>>(t, key, "report_bounded", input);
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields[0]!.path, r.text).toBe(path);
    }
    const enumValue = await invoke<QueryResult>(t, key, "report_bounded", { species: "Robert'); DROP TABLE tutors; --" });
    expect(enumValue.body.rows, enumValue.text).toEqual([]);
  });
});

describe("definitions are checked when saved; nothing is stored when refused", () => {
  const base = { name: "checked", title: "Checked", sql: "SELECT 1 AS one", parameters: [] };

  test("every class of the adversarial suite, placed in a report, is refused with query_database's reason", async () => {
    const before = await reportCount(owner.clinic.id);
    for (const [family, cases] of Object.entries(ADVERSARIAL)) {
      for (const [sql] of cases.slice(0, 4)) {
        const saved = await owner.as<Refusal<{ reason: string }>>("POST", "/api/v1/mcp/reports", { json: { ...base, sql } });
        const direct = guardSql(sql);
        expect(saved.status, `${family}: ${sql}\n${saved.text}`).toBe(400);
        expect(saved.body.code).toBe("SQL_GUARD_BLOCKED");
        expect(direct.ok).toBe(false);
        expect(saved.body.details.reason, `${family}: ${sql}`).toBe(direct.ok ? "accepted" : direct.reason);
      }
    }
    expect(await reportCount(owner.clinic.id)).toBe(before);
  });

  test.each([
    ["an undeclared placeholder", { sql: "SELECT :who AS who" }, "body.sql", "not declared"],
    ["a declared parameter the SQL never uses", { parameters: [{ name: "unused", type: "string" }] }, "body.parameters.0.name", "never uses"],
    ["a parameter declared twice", { sql: "SELECT :a AS a", parameters: [{ name: "a", type: "string" }, { name: "a", type: "integer" }] }, "body.parameters.1.name", "twice"],
    ["a default of the wrong type", { sql: "SELECT :n AS n", parameters: [{ name: "n", type: "integer", default: "five" }] }, "body.parameters.0.default", "integer"],
    ["a default outside the bounds", { sql: "SELECT :n AS n", parameters: [{ name: "n", type: "integer", default: 50, min: 1, max: 10 }] }, "body.parameters.0.default", "integer"],
    ["a required parameter with a default", { sql: "SELECT :n AS n", parameters: [{ name: "n", type: "integer", required: true, default: 1 }] }, "body.parameters.0.default", "required"],
    ["bounds on a boolean", { sql: "SELECT :b AS b", parameters: [{ name: "b", type: "boolean", min: 0 }] }, "body.parameters.0.min", "apply to"],
    ["min above max", { sql: "SELECT :n AS n", parameters: [{ name: "n", type: "integer", min: 5, max: 1 }] }, "body.parameters.0.max", "below min"],
    ["an enum value of another type", { sql: "SELECT :n AS n", parameters: [{ name: "n", type: "integer", enum: [1, "two"] }] }, "body.parameters.0.enum.1", "integer"],
    ["SQL PostgreSQL cannot plan (unknown column)", { sql: "SELECT nickname FROM tutors" }, "body.sql", "nickname"],
    ["SQL PostgreSQL cannot plan (type mismatch)", { sql: "SELECT name FROM tutors WHERE created_at > :n", parameters: [{ name: "n", type: "boolean" }] }, "body.sql", "operator"],
    ["a name that is not snake_case", { name: "Daily-Revenue" }, "body.name", ""],
    ["a placeholder in upper case", { sql: "SELECT :Who AS who" }, null, "snake_case"],
  ])("%s is refused", async (_label, change, path, words) => {
    const before = await reportCount(owner.clinic.id);
    const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/mcp/reports", { json: { ...base, ...change } });
    expect([400, 422], r.text).toContain(r.status);
    if (path) expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(path);
    expect(r.text.toLowerCase()).toContain(words.toLowerCase());
    expect(await reportCount(owner.clinic.id)).toBe(before);
  });

  test("a name is unique in its clinic (409), but another clinic may use it", async () => {
    await saveReport(owner, { ...base, name: "same_name" });
    const again = await owner.as("POST", "/api/v1/mcp/reports", { json: { ...base, name: "same_name" } });
    expect(again.status, again.text).toBe(409);
    await saveReport(other, { ...base, name: "same_name" });
  });

  test("an update is checked as a whole: a refused change leaves the report and its version as they were", async () => {
    const report = await saveReport(owner, { ...base, name: "stable" });
    const refused = await owner.as<Refusal<{ reason: string }>>("PATCH", `/api/v1/mcp/reports/${report.id}`, { json: { sql: "SELECT * FROM users" } });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.details.reason).toBe("FORBIDDEN_TABLE");
    const unchanged = await owner.as("GET", `/api/v1/mcp/reports/${report.id}`);
    expect(unchanged.body).toMatchObject({ sql: base.sql, version: 1 });
  });
});

test("reports of one clinic are invisible to another clinic's keys and owner", async () => {
  const report = await saveReport(owner, { ...PATIENTS_BY_SPECIES, name: "private_report" });
  const foreignKey = await createKey(other, { scopes: ["read", "query", "clinic_context"] });
  const tools = await t.request<ToolList>("GET", "/mcp/tools", { token: foreignKey.api_key });
  expect(tools.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("report_private_report");
  const call = await invoke(t, foreignKey.api_key, "report_private_report", { species: "dog" });
  expect(call.status, call.text).toBe(404);
  for (const [method, path] of [["GET", `/api/v1/mcp/reports/${report.id}`], ["PATCH", `/api/v1/mcp/reports/${report.id}`], ["DELETE", `/api/v1/mcp/reports/${report.id}`]] as const) {
    const r = await other.as(method, path, method === "PATCH" ? { json: { title: "stolen" } } : {});
    expect(r.status, `${method} ${path}: ${r.text}`).toBe(404);
  }
  // Its own clinic's rows only, even for the same report text saved by the other clinic.
  await saveReport(other, { ...PATIENTS_BY_SPECIES, name: "private_report" });
  const own = await invoke<QueryResult>(t, foreignKey.api_key, "report_private_report", { species: "dog" });
  expect(own.body.rows, own.text).toEqual([{ name: "Foreign dog" }]);
});

test("scopes: a report is listed only to keys with its scope; calling it without is 403 and counted", async () => {
  await saveReport(owner, { name: "query_scoped", title: "Needs query", sql: "SELECT count(*) AS n FROM tutors", scope: "query" });
  const readOnly = await createKey(owner, { scopes: ["read"] });
  const listed = await t.request<ToolList>("GET", "/mcp/tools", { token: readOnly.api_key });
  expect(listed.body.tools.map((tool: { name: string }) => tool.name)).not.toContain("report_query_scoped");
  const denied = await invoke<ErrorBody>(t, readOnly.api_key, "report_query_scoped");
  expect(denied.status, denied.text).toBe(403);
  expect(denied.body.code).toBe("INSUFFICIENT_SCOPE");
  expect(denied.headers.get("x-ratelimit-remaining")).toBe(String(readOnly.rate_limit_per_day - 1));
  const querying = await createKey(owner, { scopes: ["query"] });
  const client = await sdkClient(querying.api_key);
  expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("report_query_scoped");
  await client.close();
});

test("quota and usage log: each call counts; the log keeps the report's name and version, and the arguments only when the owner opts in", async () => {
  const quiet = await saveReport(owner, { ...PATIENTS_BY_SPECIES, name: "quiet" });
  await owner.as("PATCH", `/api/v1/mcp/reports/${quiet.id}`, { json: { title: "Quiet v2" } });
  await saveReport(owner, { ...PATIENTS_BY_SPECIES, name: "talkative", log_arguments: true });
  const key = await createKey(owner, { scopes: ["read"], rate_limit_per_day: 3 });
  const ok = await invoke(t, key.api_key, "report_quiet", { species: "dog" });
  expect(ok.headers.get("x-ratelimit-remaining")).toBe("2");
  await invoke(t, key.api_key, "report_quiet", { species: "secret value" });
  await invoke(t, key.api_key, "report_talkative", { species: "cat" });
  const limited = await invoke(t, key.api_key, "report_quiet", { species: "dog" });
  expect(limited.status).toBe(429);
  const rows = await usageRows(t, key.id);
  expect(rows.map((row) => [row.tool, row.outcome, row.sql_text])).toEqual([
    ["report_quiet", "ok", "report quiet v2"],
    ["report_quiet", "error", "report quiet v2"],
    ["report_talkative", "ok", 'report talkative v1 arguments {"species":"cat"}'],
    ["report_quiet", "rate_limited", null],
  ]);
  expect(JSON.stringify(rows)).not.toContain("secret value");
});

test("a change takes effect on every instance at once: a second app over the same database sees it on its next call", async () => {
  const second = await createTestApp({ database: t.database, clock: t.clock });
  try {
    const key = await createKey(owner, { scopes: ["read"] });
    const report = await saveReport(owner, { name: "shared", title: "Shared", sql: "SELECT 1 AS version" });
    const viaSecond = () => second.request<QueryResult>("POST", "/mcp/tools/report_shared/invoke", { token: key.api_key, json: {} });
    expect((await viaSecond()).body.rows).toEqual([{ version: 1 }]);
    await owner.as("PATCH", `/api/v1/mcp/reports/${report.id}`, { json: { sql: "SELECT 2 AS version" } });
    expect((await viaSecond()).body.rows).toEqual([{ version: 2 }]);
    await owner.as("DELETE", `/api/v1/mcp/reports/${report.id}`);
    expect((await viaSecond()).status).toBe(404);
  } finally {
    await second.close();
  }
});

test("only the owner manages reports", async () => {
  const vet = await addMember(t, owner, "vet");
  for (const [method, path] of [["GET", "/api/v1/mcp/reports"], ["POST", "/api/v1/mcp/reports"], ["GET", "/api/v1/mcp/reports/templates"]] as const) {
    const r = await vet.as(method, path, method === "POST" ? { json: { name: "x", title: "x", sql: "SELECT 1 AS one" } } : {});
    expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
  }
});
