import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic } from "../helpers/clinic";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The parts of /openapi.json these tests read. */
interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags?: string[];
  security: Record<string, string[]>[];
  parameters?: { name: string; schema: unknown }[];
  requestBody?: { content: Record<string, { schema?: { properties?: Record<string, unknown> }; example?: unknown }> };
  responses: Record<string, unknown>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
}

test("/openapi.json documents every route of the app", async () => {
  const spec = await t.request<OpenApiDocument>("GET", "/openapi.json");
  expect(spec.status, spec.text).toBe(200);
  expect(spec.body.openapi).toBe("3.1.0");
  const documented = new Set<string>();
  for (const [path, methods] of Object.entries(spec.body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(methods)) documented.add(`${method.toUpperCase()} ${path.replace(/\/$/, "")}`);
  }
  const missing = t.app.routes
    // CORS preflights (OPTIONS, answered by the CORS plugin) are not operations.
    .filter((r) => r.method !== "OPTIONS" && !r.path.startsWith("/docs") && r.path !== "/openapi.json" && !(r.hooks as { detail?: { hide?: boolean } }).detail?.hide)
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "")}`)
    .filter((route) => !documented.has(route));
  expect(missing).toEqual([]);
  const login = spec.body.paths["/api/v1/auth/login"]!.post!;
  expect(Object.keys(login.responses)).toEqual(expect.arrayContaining(["200", "401", "422", "429"]));
});

test("/docs renders from local assets only (works offline)", async () => {
  const page = await t.request("GET", "/docs");
  expect(page.status).toBe(200);
  expect(page.text).toContain("swagger-ui-bundle.js");
  expect(page.text).not.toMatch(/(src|href)="https?:/);
  for (const asset of ["/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"]) {
    const response = await t.app.handle(new Request(`http://localhost${asset}`));
    expect(response.status, asset).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  }
});

test("/docs may not be framed, runs only its own scripts, and Swagger UI keeps no token in localStorage", async () => {
  const page = await t.request("GET", "/docs");
  const csp = page.headers.get("content-security-policy")!;
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
  expect(page.headers.get("x-frame-options")).toBe("DENY");
  expect(page.text).not.toMatch(/<script>(?!<)/);
  const start = await t.request("GET", "/docs/assets/start.js");
  expect(start.text).toContain("persistAuthorization: false");
});

test("every operation is complete: id, summary, tag, security per surface, bodies with schema and example, integers as integers, real defaults", async () => {
  const spec = (await t.request<OpenApiDocument>("GET", "/openapi.json")).body;
  const text = JSON.stringify(spec);
  expect(text).not.toContain('"format":"integer"');
  expect(text).not.toContain('"type":"void"');
  const ids = new Set<string>();
  for (const [path, methods] of Object.entries(spec.paths)) {
    expect(path === "/" || !path.endsWith("/"), path).toBe(true);
    for (const [method, op] of Object.entries(methods)) {
      const where = `${method} ${path}`;
      expect(op.operationId, where).toBeString();
      expect(ids.has(op.operationId), `${where}: duplicate operationId`).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, where).toBeString();
      expect(op.tags?.length, where).toBeGreaterThan(0);
      const expected = ["/register", "/health", "/ready", "/mcp/health", "/api/v1/auth/login", "/api/v1/auth/register", "/api/v1/auth/refresh", "/api/v1/auth/logout"].includes(path) || path.startsWith("/api/v1/public/") || path === "/api/v1/calendar/{token}"
        ? []
        : path.startsWith("/mcp")
          ? [{ apiKey: [] }]
          : [{ accessToken: [] }];
      expect(op.security, where).toEqual(expected);
      if (op.requestBody) {
        const media = op.requestBody.content["application/json"];
        expect(media?.schema, where).toBeDefined();
        expect(media?.example, where).toBeDefined();
      }
      if (["post", "patch"].includes(method)) expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(["400", "413", "415", "422"]));
      if (op.security.length) expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(["401", "429"]));
    }
  }
  const limit = spec.paths["/api/v1/tutors"]!.get!.parameters!.find((p: { name: string }) => p.name === "limit");
  expect(limit!.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 50 });
  const tutorBody = spec.paths["/api/v1/tutors"]!.post!.requestBody!.content["application/json"];
  expect(tutorBody!.schema!.properties!.name).toMatchObject({ type: "string", minLength: 1 });
});

test("request bodies say that their objects are closed (additionalProperties false), as the service refuses undeclared properties; responses stay open", async () => {
  // Elysia writes additionalProperties into the schema objects it compiles, which every app in a
  // process shares: the document of an app built after routes have run must say the same.
  const owner = await registerClinic(t);
  expect((await owner.as("POST", "/api/v1/tutors", { json: { name: "Ana" } })).status).toBe(201);
  const later = await createTestApp();
  const spec = (await later.request<OpenApiDocument>("GET", "/openapi.json")).body;
  await later.close();
  type Node = { properties?: Record<string, Node>; items?: Node; anyOf?: Node[]; additionalProperties?: unknown };
  const open: string[] = [];
  const walk = (node: Node | undefined, where: string): void => {
    if (!node || typeof node !== "object") return;
    if (node.properties && node.additionalProperties !== false) open.push(where);
    for (const [name, inner] of Object.entries(node.properties ?? {})) walk(inner, `${where}.${name}`);
    walk(node.items, `${where}[]`);
    node.anyOf?.forEach((branch) => walk(branch, where));
  };
  let bodies = 0;
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schema = op.requestBody?.content["application/json"]?.schema as Node | undefined;
      if (!schema?.properties) continue;
      // RFC 7591 §2: a registration server must ignore client metadata it does not understand.
      if (path === "/register") continue;
      bodies++;
      walk(schema, `${method} ${path} body`);
    }
  }
  expect(bodies).toBeGreaterThan(20);
  expect(open).toEqual([]);
  // Responses are not requests: the service's answers may gain fields, so no response is closed.
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) expect(JSON.stringify(op.responses), `${method} ${path}`).not.toContain('"additionalProperties":false');
  }
});

test("the OpenAPI lint fails on what Redocly's recommended rules only warn about, and the served document has none of it", async () => {
  const spec = (await t.request<OpenApiDocument & Record<string, unknown>>("GET", "/openapi.json")).body;
  const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
  // One warning of the recommended ruleset: an allOf holding the same schema twice.
  const warned = structuredClone(spec) as any;
  const anyResponse = warned.paths["/mcp/health"].get.responses["200"].content["application/json"];
  anyResponse.schema = { allOf: [{ type: "object" }, { type: "object" }] };
  const lint = (document: unknown) => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(document));
    // The same command as `bun run lint:openapi`, with the repository's redocly.yaml.
    return Bun.spawnSync(["node_modules/.bin/redocly", "lint", "--config", "redocly.yaml", "--format=stylish", file], {
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    });
  };
  try {
    const refused = lint(warned);
    expect(refused.exitCode, refused.stdout.toString() + refused.stderr.toString()).not.toBe(0);
    expect(refused.stdout.toString() + refused.stderr.toString()).toContain("no-illogical-composition-keywords");
    const clean = lint(spec);
    const output = clean.stdout.toString() + clean.stderr.toString();
    expect(clean.exitCode, output).toBe(0);
    // Problems are listed as `line:column  severity  rule  message`, then counted.
    expect(output).not.toMatch(/\d+:\d+\s+(warning|error)\s|You have \d+ warning/);
    expect(output).toContain("Your API description is valid");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const scripts = (await Bun.file("package.json").json()).scripts as Record<string, string>;
  expect(scripts["lint:openapi"]).toContain("redocly lint --config redocly.yaml");
}, 60_000);
