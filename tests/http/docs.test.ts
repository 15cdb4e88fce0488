import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("/openapi.json documents every route of the app", async () => {
  const spec = await t.request("GET", "/openapi.json");
  expect(spec.status, spec.text).toBe(200);
  expect(spec.body.openapi).toStartWith("3.");
  const documented = new Set<string>();
  for (const [path, methods] of Object.entries(spec.body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(methods)) documented.add(`${method.toUpperCase()} ${path.replace(/\/$/, "")}`);
  }
  const missing = t.app.routes
    .filter((r) => !r.path.startsWith("/docs") && r.path !== "/openapi.json")
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "")}`)
    .filter((route) => !documented.has(route));
  expect(missing).toEqual([]);
  const login = spec.body.paths["/api/v1/auth/login"].post;
  expect(Object.keys(login.responses)).toEqual(expect.arrayContaining(["200", "401", "422", "429"]));
});

test("/docs renders from local assets only (works offline)", async () => {
  const page = await t.request("GET", "/docs");
  expect(page.status).toBe(200);
  expect(page.text).toContain("SwaggerUIBundle");
  expect(page.text).not.toMatch(/(src|href)="https?:/);
  for (const asset of ["/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"]) {
    const response = await t.app.handle(new Request(`http://localhost${asset}`));
    expect(response.status, asset).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  }
});
