/** CORS: listed origins may call (with credentials), others get no CORS headers; MCP agrees with its Origin check. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { SessionView } from "../../src/modules/auth/model";
import { createTestApp, type ErrorBody, type TestApp } from "../helpers/app";
import { PASSWORD, registerClinic } from "../helpers/clinic";
import { createKey } from "../mcp/helpers";

const APP_ORIGIN = "https://desk.clinic.example";
const MCP_ORIGIN = "https://assistant.example";
const EVIL = "https://evil.example";
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ config: { corsOrigins: [APP_ORIGIN], mcpAllowedOrigins: [MCP_ORIGIN] } });
});
afterAll(() => t.close());

const preflight = (path: string, origin: string, method = "POST") =>
  t.app.handle(new Request(`http://localhost${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization, content-type" } }));

describe("the REST API", () => {
  test("a preflight from an allowed origin is answered with the origin, credentials and the headers a client needs", async () => {
    const r = await preflight("/api/v1/auth/login", APP_ORIGIN);
    expect(r.status).toBeLessThan(300);
    expect(r.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(r.headers.get("access-control-allow-credentials")).toBe("true");
    expect(r.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
    expect(r.headers.get("access-control-allow-methods")).toContain("PATCH");
    expect(r.headers.get("access-control-max-age")).toBe("600");
  });

  test("a browser on an allowed origin can log in and list tutors, and reads the exposed headers", async () => {
    const owner = await registerClinic(t);
    const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: { email: owner.user.email, password: PASSWORD }, headers: { origin: APP_ORIGIN } });
    expect(login.status, login.text).toBe(200);
    expect(login.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(login.headers.get("set-cookie")).toContain("service_refresh=");
    const list = await t.request("GET", "/api/v1/tutors", { token: login.body.access_token, headers: { origin: APP_ORIGIN } });
    expect(list.status, list.text).toBe(200);
    expect(list.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(list.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("x-request-id");
  });

  test("an origin that is not listed gets no CORS headers (the browser blocks it), on preflight and on the call", async () => {
    const r = await preflight("/api/v1/auth/login", EVIL);
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const call = await t.request("POST", "/api/v1/auth/login", { json: { email: "x@y.cl", password: PASSWORD }, headers: { origin: EVIL } });
    expect(call.headers.get("access-control-allow-origin")).toBeNull();
    // The MCP origin is not a REST origin.
    expect((await preflight("/api/v1/tutors", MCP_ORIGIN, "GET")).headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a caller without an Origin, or with one not listed, gets no Access-Control-* header at all", async () => {
    const accessControl = (r: { headers: Headers }) => [...r.headers.keys()].filter((name) => name.startsWith("access-control-"));
    for (const headers of [{}, { origin: EVIL }] as Record<string, string>[]) {
      const health = await t.request("GET", "/health", { headers });
      expect(accessControl(health), JSON.stringify(Object.fromEntries(health.headers))).toEqual([]);
      const mcp = await t.request("POST", "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { ...headers, accept: "application/json, text/event-stream" } });
      expect(accessControl(mcp), JSON.stringify(Object.fromEntries(mcp.headers))).toEqual([]);
    }
    expect(accessControl(await preflight("/api/v1/auth/login", EVIL))).toEqual([]);
  });

  test("by default (no CORS_ORIGINS) no origin is allowed", async () => {
    const plain = await createTestApp();
    const r = await plain.app.handle(new Request("http://localhost/api/v1/auth/login", { method: "OPTIONS", headers: { origin: APP_ORIGIN, "access-control-request-method": "POST" } }));
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    await plain.close();
  });
});

describe("MCP", () => {
  test("MCP_ALLOWED_ORIGINS pass both the preflight and the Origin check; others fail both", async () => {
    const owner = await registerClinic(t);
    const key = await createKey(owner);
    expect((await preflight("/mcp", MCP_ORIGIN)).headers.get("access-control-allow-origin")).toBe(MCP_ORIGIN);
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const headers = { accept: "application/json, text/event-stream" };
    const ok = await t.request("POST", "/mcp", { token: key.api_key, json: body, headers: { ...headers, origin: MCP_ORIGIN } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(MCP_ORIGIN);
    expect((await preflight("/mcp", APP_ORIGIN)).headers.get("access-control-allow-origin")).toBeNull();
    const refused = await t.request<ErrorBody>("POST", "/mcp", { token: key.api_key, json: body, headers: { ...headers, origin: EVIL } });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.code).toBe("ORIGIN_NOT_ALLOWED");
  });

  test("every OAuth endpoint and both metadata documents answer MCP_ALLOWED_ORIGINS' preflights and calls, WWW-Authenticate exposed; other origins get nothing", async () => {
    const paths = ["/token", "/register", "/revoke", "/authorize", "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/openid-configuration"];
    for (const path of paths) {
      const allowed = await preflight(path, MCP_ORIGIN);
      expect(allowed.headers.get("access-control-allow-origin"), path).toBe(MCP_ORIGIN);
      expect(allowed.headers.get("access-control-allow-methods"), path).toContain("POST");
      expect((await preflight(path, EVIL)).headers.get("access-control-allow-origin"), path).toBeNull();
      expect((await preflight(path, APP_ORIGIN)).headers.get("access-control-allow-origin"), path).toBeNull();
    }
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"]) {
      const r = await t.request("GET", path, { headers: { origin: MCP_ORIGIN } });
      expect(r.headers.get("access-control-allow-origin")).toBe(MCP_ORIGIN);
    }
    const registered = await t.request("POST", "/register", { json: { redirect_uris: ["http://127.0.0.1:6274/oauth/callback"] }, headers: { origin: MCP_ORIGIN } });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.headers.get("access-control-allow-origin")).toBe(MCP_ORIGIN);
    const token = await t.request("POST", "/token", { body: "grant_type=refresh_token&refresh_token=x", headers: { origin: MCP_ORIGIN, "content-type": "application/x-www-form-urlencoded" } });
    expect(token.status).toBe(400);
    expect(token.headers.get("access-control-allow-origin")).toBe(MCP_ORIGIN);
    const unauthorized = await t.request("POST", "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { origin: MCP_ORIGIN, accept: "application/json, text/event-stream" } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-expose-headers")).toContain("www-authenticate");
    expect((await t.request("GET", "/.well-known/oauth-authorization-server", { headers: { origin: EVIL } })).headers.get("access-control-allow-origin")).toBeNull();
  });
});
