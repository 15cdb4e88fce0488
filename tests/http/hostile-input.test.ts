/**
 * Hostile input, generated from the app's own route schemas: for every route, every body field
 * and every query parameter, each class of bad value must answer a 4xx in the error envelope
 * with X-Request-ID, and write nothing. New routes and fields join the suite without edits.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type ErrorBody, type Refusal, type TestApp, type TestResponse, type ValidationDetails } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { createKey, type ToolList } from "../mcp/helpers";
import { useClinicApp } from "../helpers/fixture";

type Schema = {
  type?: string;
  additionalProperties?: unknown;
  format?: string;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  items?: Schema;
  minimum?: number;
  const?: unknown;
};

interface Route {
  method: string;
  path: string;
  body?: Schema;
  query?: Schema;
}

interface Hostile {
  label: string;
  value: unknown;
}

const MB_STRING = "x".repeat(1024 * 1024 + 1);
const ZERO_UUID = "00000000-0000-7000-8000-000000000000";

let t: TestApp;
let owner: ClinicSession;
let mcpKey: string;
let routes: Route[];

useClinicApp((made) => ({ t, owner } = made));
beforeAll(async () => {
  mcpKey = (await createKey(owner)).api_key;
  routes = (t.app.routes as { method: string; path: string; hooks?: { body?: Schema; query?: Schema } }[])
    .filter((r) => r.path.startsWith("/api/v1/") || r.path.startsWith("/mcp"))
    .map((r) => ({ method: r.method, path: r.path.replace(/\/$/, "").replaceAll(/:[a-z_]+/g, ZERO_UUID), body: r.hooks?.body, query: r.hooks?.query }));
});

/** Every row of every table of the service, so "writes nothing" covers tables a test forgets. */
async function totalRows(): Promise<number> {
  const tables = await t.database.query<{ name: string }>(
    "select quote_ident(tablename) as name from pg_tables where schemaname = 'public' and tablename not like '%drizzle%'",
  );
  const [row] = await t.database.query<{ n: string | number }>(`select (${tables.map((x) => `(select count(*) from ${x.name})`).join(" + ")}) as n`);
  return Number(row!.n);
}

const branches = (schema: Schema): Schema[] => (schema.anyOf ? schema.anyOf.flatMap(branches) : [schema]);
const hasType = (schema: Schema, type: string) => branches(schema).some((b) => b.type === type);
const hasFormat = (schema: Schema, format: string) => branches(schema).some((b) => b.format === format);
const nullable = (schema: Schema) => hasType(schema, "null");

/** The bad values a field of this schema must refuse. */
function hostileValues(schema: Schema): Hostile[] {
  const values: Hostile[] = [
    { label: "NUL", value: "a\u0000b" },
    { label: "lone surrogate", value: "a\ud800b" },
    { label: "1 MB string", value: MB_STRING },
    { label: "10,000-element array", value: Array.from({ length: 10_000 }, () => 1) },
    { label: "deeply nested JSON", value: JSON.parse("[".repeat(2000) + "]".repeat(2000)) },
    { label: "1e308", value: 1e308 },
    { label: "2^63", value: 2 ** 63 },
    { label: "an object", value: { nested: true } },
  ];
  if (!nullable(schema)) values.push({ label: "null", value: null });
  if (hasType(schema, "integer")) {
    values.push({ label: "1.5 for an integer", value: 1.5 }, { label: "a numeric string for an integer", value: "12" });
    const minimum = branches(schema).find((b) => b.type === "integer")?.minimum;
    if (minimum !== undefined && minimum > 0) values.push({ label: "-0", value: -0 });
  }
  if (hasType(schema, "string")) values.push({ label: "a number for a string", value: 12345 });
  if (hasType(schema, "boolean")) values.push({ label: "a string for a boolean", value: "true" });
  if (hasFormat(schema, "date")) values.push({ label: "impossible date", value: "2026-02-30" }, { label: "year 0000", value: "0000-01-01" });
  if (hasFormat(schema, "date-time")) {
    values.push(
      { label: "timestamp without offset", value: "2026-11-24T10:00:00" },
      { label: "timestamp on Feb 30", value: "2026-02-30T10:00:00Z" },
      { label: "24:00", value: "2026-11-24T24:00:00Z" },
      { label: "leap second", value: "2026-06-30T23:59:60Z" },
    );
  }
  return values;
}

/** Body fields as paths: top-level properties, and each property of an array of objects. */
function bodyFields(schema: Schema | undefined): { path: string[]; schema: Schema }[] {
  if (!schema?.properties) return [];
  const fields: { path: string[]; schema: Schema }[] = [];
  for (const [name, inner] of Object.entries(schema.properties)) {
    fields.push({ path: [name], schema: inner });
    const itemObject = branches(inner).find((b) => b.type === "array")?.items;
    for (const [itemName, itemSchema] of Object.entries(itemObject?.properties ?? {})) fields.push({ path: [name, "0", itemName], schema: itemSchema });
  }
  return fields;
}

function withValue(path: string[], value: unknown): unknown {
  const [head, ...rest] = path as [string, ...string[]];
  if (!rest.length) return { [head]: value };
  return { [head]: [withValue(rest.slice(1), value)] };
}

async function send<Body = ErrorBody>(route: Route, options: { json?: unknown; body?: string | Uint8Array; query?: string }): Promise<TestResponse<Body>> {
  const token = route.path.startsWith("/mcp") ? mcpKey : owner.token;
  const path = options.query === undefined ? route.path : `${route.path}?${options.query}`;
  return t.request<Body>(route.method, path, { token, json: options.json, body: options.body, headers: options.body === undefined ? {} : { "content-type": "application/json" } });
}

function expectRefused(r: TestResponse<ErrorBody>, what: string, statuses: number[] = [400, 413, 422]) {
  const shown = `${what} → ${r.status} ${r.text.slice(0, 400)}`;
  expect(statuses, shown).toContain(r.status);
  expect(r.body?.code, shown).toBeString();
  expect(r.body?.request_id, shown).toBe(r.headers.get("x-request-id")!);
}

describe("every body field of every route refuses each hostile class, writing nothing", () => {
  test("generated from the route schemas", async () => {
    const before = await totalRows();
    let cases = 0;
    for (const route of routes) {
      for (const field of bodyFields(route.body)) {
        for (const hostile of hostileValues(field.schema)) {
          const r = await send(route, { json: withValue(field.path, hostile.value) });
          expectRefused(r, `${route.method} ${route.path} body.${field.path.join(".")} = ${hostile.label}`);
          cases++;
        }
      }
    }
    expect(cases).toBeGreaterThan(500);
    expect(await totalRows()).toBe(before);
  }, 120_000);

  test("a body that is not UTF-8 is 400 INVALID_JSON on every route that takes one", async () => {
    const invalid = new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    for (const route of routes.filter((r) => r.method === "POST" || r.method === "PATCH")) {
      const r = await send(route, { body: invalid });
      expectRefused(r, `${route.method} ${route.path} with invalid UTF-8`, [400]);
      expect(r.body.code).toBe("INVALID_JSON");
    }
  });

  test("NUL and lone surrogates in the MCP tool input are refused before the tool runs", async () => {
    for (const sql of ["select 1\u0000", "select '\ud800'"]) {
      const r = await t.request<Refusal<ValidationDetails>>("POST", "/mcp/tools/query_database/invoke", { token: mcpKey, json: { sql } });
      expectRefused(r, `query_database ${JSON.stringify(sql)}`, [422]);
      expect(r.body.details.fields[0]!.path).toBe("body.sql");
    }
    const rpc = await t.request<ErrorBody>("POST", "/mcp", {
      token: mcpKey,
      headers: { accept: "application/json, text/event-stream" },
      json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "query_database\u0000", arguments: {} } },
    });
    expectRefused(rpc, "tools/call with NUL in the tool name", [422]);
  });
});

describe("a body property the route does not declare is refused, never dropped", () => {
  const UNDECLARED = "an_undeclared_property";
  const arraysOfObjects = (schema: Schema) =>
    Object.entries(schema.properties ?? {}).filter(([, inner]) => branches(inner).some((b) => b.type === "array" && b.items?.properties));

  test("generated from the route schemas: at the top level and inside arrays of objects, 422 naming it, writing nothing", async () => {
    const before = await totalRows();
    let cases = 0;
    for (const route of routes) {
      if (!route.body?.properties) continue;
      const bodies: [unknown, string][] = [[{ [UNDECLARED]: 1 }, `body.${UNDECLARED}`]];
      for (const [name] of arraysOfObjects(route.body)) bodies.push([{ [name]: [{ [UNDECLARED]: 1 }] }, `body.${name}.0.${UNDECLARED}`]);
      for (const [json, path] of bodies) {
        const r = await send<Refusal<ValidationDetails>>(route, { json });
        expectRefused(r, `${route.method} ${route.path} ${JSON.stringify(json)}`, [422]);
        expect(r.body.details.fields, r.text).toContainEqual({ path, message: "Unknown property" });
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(25);
    expect(await totalRows()).toBe(before);
  });

  test("a body that is valid but for one extra property is refused whole: nothing created, nothing changed", async () => {
    const before = await totalRows();
    const refused = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/tutors", { json: { name: "Ana", bogus: 1 } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.message, refused.text).toBe("Unknown body property: bogus");
    expect(await totalRows()).toBe(before);
    // Names every object inherits are not declared by a schema either.
    const inherited = await t.request<Refusal<ValidationDetails>>("POST", "/api/v1/tutors", { token: owner.token, body: '{"name":"Ana","__proto__":{"x":1},"constructor":1}', headers: { "content-type": "application/json" } });
    expect(inherited.status, inherited.text).toBe(422);
    expect(inherited.body.details.fields.map((f) => f.path), inherited.text).toEqual(["body.__proto__", "body.constructor"]);
    expect(await totalRows()).toBe(before);

    const tutor = await owner.as<{ id: string; name: string }>("POST", "/api/v1/tutors", { json: { name: "Ana" } });
    expect(tutor.status, tutor.text).toBe(201);
    const patch = await owner.as<Refusal<ValidationDetails>>("PATCH", `/api/v1/tutors/${tutor.body.id}`, { json: { name: "Bea", nickname: "B", phone_number: "1" } });
    expect(patch.status, patch.text).toBe(422);
    expect(patch.body.details.fields.map((f) => f.path), patch.text).toEqual(["body.nickname", "body.phone_number"]);
    expect(patch.body.message, patch.text).toBe("Unknown body properties: nickname, phone_number");
    const after = await owner.as<{ name: string }>("GET", `/api/v1/tutors/${tutor.body.id}`);
    expect(after.body.name, after.text).toBe("Ana");
  });
});

describe("an argument a tool does not take is refused the same way", () => {
  test("every tool a key sees, including a saved report, over /invoke and POST /mcp: 422 naming it as an unknown property", async () => {
    const report = await owner.as("POST", "/api/v1/mcp/reports", { json: { name: "visit_count", title: "Visits", sql: "SELECT count(*) AS n FROM visits" } });
    expect(report.status, report.text).toBe(201);
    const listed = await t.request<ToolList>("GET", "/mcp/tools", { token: mcpKey });
    const tools = listed.body.tools.map((tool) => tool.name);
    expect(tools, listed.text).toContain("report_visit_count");
    for (const tool of tools) {
      const invoked = await t.request<Refusal<ValidationDetails>>("POST", `/mcp/tools/${tool}/invoke`, { token: mcpKey, json: { an_undeclared_argument: 1 } });
      expect(invoked.status, invoked.text).toBe(422);
      expect(invoked.body.details.fields, invoked.text).toContainEqual({ path: "body.an_undeclared_argument", message: "Unknown property" });
      expect(invoked.body.message, invoked.text).toBe(`Unknown argument for ${tool}: an_undeclared_argument`);
      const called = await t.request<{ result: { isError: boolean; content: { text: string }[] } }>("POST", "/mcp", {
        token: mcpKey,
        headers: { accept: "application/json, text/event-stream" },
        json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: { an_undeclared_argument: 1 } } },
      });
      expect(called.body.result.isError, called.text).toBe(true);
      expect(JSON.parse(called.body.result.content[0]!.text).details.fields, called.text).toContainEqual({ path: "body.an_undeclared_argument", message: "Unknown property" });
    }
    // These calls reached a key, so they are counted and logged: written now, not by the periodic
    // flush in the middle of a later test that checks that nothing is written.
    await t.context.mcp.flush();
  });
});

describe("every query parameter of every list refuses each hostile class", () => {
  const QUERY_CLASSES: Hostile[] = [
    { label: "NUL", value: "a%00b" },
    { label: "lone surrogate as UTF-8", value: "%ED%A0%80" },
    { label: "invalid percent-encoding", value: "%FF" },
    { label: "1 MB string", value: "x".repeat(1024 * 1024) },
  ];

  test("generated from the route schemas", async () => {
    const before = await totalRows();
    for (const route of routes.filter((r) => r.query?.properties)) {
      for (const [name, schema] of Object.entries(route.query!.properties!)) {
        const values = [...QUERY_CLASSES];
        if (hasType(schema, "integer")) values.push({ label: "1.5", value: "1.5" }, { label: "2^63", value: "9223372036854775808" }, { label: "1e308", value: "1e308" }, { label: "word", value: "abc" });
        if (hasFormat(schema, "date")) values.push({ label: "impossible date", value: "2026-02-30" }, { label: "9999-12-31", value: "9999-12-31" }, { label: "0000-01-01", value: "0000-01-01" }, { label: "today", value: "today" });
        for (const hostile of values) {
          const r = await send(route, { query: `${name}=${hostile.value}` });
          expectRefused(r, `${route.method} ${route.path}?${name}=${hostile.label}`);
        }
      }
    }
    expect(await totalRows()).toBe(before);
  }, 120_000);

  test("an undeclared parameter is 422 naming it, on every route", async () => {
    for (const route of routes) {
      const r = await send<Refusal<ValidationDetails>>(route, { query: "sort=name", json: route.method === "GET" || route.method === "DELETE" ? undefined : {} });
      expectRefused(r, `${route.method} ${route.path}?sort=name`, [422]);
      expect(r.body.details.fields, r.text).toContainEqual({ path: "query.sort", message: "Unknown query parameter" });
    }
  });

  test("offset where a list has only cursors is 422, not silently ignored", async () => {
    for (const path of ["/api/v1/users", "/api/v1/operations/visits", "/api/v1/billing/invoices", "/api/v1/mcp/usage"]) {
      const r = await owner.as<Refusal<ValidationDetails>>("GET", `${path}?offset=10`);
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields[0]!.path).toBe("query.offset");
    }
  });
});

describe("a seeded random layer over the same routes", () => {
  test("random hostile text in random fields is always a 4xx that writes nothing", async () => {
    const targets = routes.flatMap((route) => bodyFields(route.body).map((field) => ({ route, field })));
    const hostileText = fc
      .tuple(fc.string({ maxLength: 20 }), fc.constantFrom("\u0000", "\ud800", "\udfff", "\udbff\u0000"), fc.string({ maxLength: 20 }))
      .map(([a, bad, b]) => a + bad + b);
    const before = await totalRows();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: targets.length - 1 }), hostileText, async (index, value) => {
        const { route, field } = targets[index]!;
        const r = await send(route, { json: withValue(field.path, value) });
        expectRefused(r, `${route.method} ${route.path} body.${field.path.join(".")} = ${JSON.stringify(value)}`);
      }),
      { seed: 20261123, numRuns: 300 },
    );
    expect(await totalRows()).toBe(before);
  }, 60_000);
});
