/**
 * Response headers are part of the contract, checked the way bodies are: every header an answer
 * carries, other than generic transport ones, must be declared for that operation and status in
 * /openapi.json (tests/helpers/contract.ts applies the rule to every response the suite receives).
 * These tests pin the rule itself and the headers that slipped through before it existed.
 */
import { beforeAll, expect, test } from "bun:test";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { contractFor } from "../helpers/contract";
import { useClinicApp } from "../helpers/fixture";
import { createKey, invoke } from "../mcp/helpers";

type Json = Record<string, any>;

let t: TestApp;
let owner: ClinicSession;
let document: Json;

useClinicApp((made) => ({ t, owner } = made));
beforeAll(() => {
  document = t.context.apiDocument.json as Json;
});

const declared = (path: string, method: string, status: string) =>
  Object.keys(document.paths[path][method].responses[status].headers ?? {}).map((name) => name.toLowerCase());

test("an undeclared header fails the contract; generic transport headers and declared ones pass", () => {
  const checker = contractFor(document);
  const body = JSON.stringify({ status: "ok", database: "ok" });
  const base = { "content-type": "application/json", "content-length": String(body.length), "x-request-id": "r", vary: "Origin", date: new Date().toUTCString() };
  expect(checker.problem("GET", "/mcp/health", 200, new Headers(base), body)).toBeNull();
  expect(checker.problem("GET", "/mcp/health", 200, new Headers({ ...base, "access-control-allow-origin": "https://a.test" }), body)).toBeNull();
  expect(checker.problem("GET", "/mcp/health", 200, new Headers({ ...base, "x-debug-sql": "select 1" }), body)).toContain("header x-debug-sql is sent but not documented");
  // A header documented for one status is not thereby documented for another.
  expect(checker.problem("GET", "/mcp/health", 200, new Headers({ ...base, "retry-after": "5" }), body)).toContain("retry-after");
});

test("POST /mcp/tools/{tool}/invoke documents the X-RateLimit-* headers it sends on 200, and sends them", async () => {
  expect(declared("/mcp/tools/{tool}/invoke", "post", "200")).toEqual(expect.arrayContaining(["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]));
  const key = await createKey(owner);
  const r = await invoke(t, key.api_key, "get_clinic_context");
  expect(r.status, r.text).toBe(200);
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) expect(r.headers.get(name), name).toMatch(/^\d+$/);
});

test("the session routes document the refresh cookie and their per-IP rate headers; every 401 documents WWW-Authenticate", () => {
  for (const [path, status] of [["/api/v1/auth/register", "201"], ["/api/v1/auth/login", "200"], ["/api/v1/auth/refresh", "200"], ["/api/v1/auth/logout", "204"]] as const) {
    expect(declared(path, "post", status), path).toContain("set-cookie");
  }
  for (const path of ["/api/v1/auth/register", "/api/v1/auth/login"]) {
    expect(declared(path, "post", "429"), path).toEqual(expect.arrayContaining(["x-ratelimit-limit", "retry-after"]));
  }
  let unauthorised = 0;
  for (const item of Object.values(document.paths as Json)) {
    for (const operation of Object.values(item as Json)) {
      const response = operation.responses["401"];
      if (!response) continue;
      expect(Object.keys(response.headers)).toContain("WWW-Authenticate");
      unauthorised++;
    }
  }
  expect(unauthorised).toBeGreaterThan(20);
});
