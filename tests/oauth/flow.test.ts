/**
 * The MCP authorization flow against the app, driven by oauth4webapi (a client library nobody
 * here wrote): discovery, registration, the owner's consent, tokens, a connection as a principal
 * (scopes, quota, usage rows), refresh rotation with its grace window, revocation, and the
 * protocol's edges (PKCE mismatch, reused code, wrong resource, expired token).
 */
import { describe, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import type { TestApp } from "../helpers/app";
import { relogin, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { authorize, discover, exchange, mcpCall, ORIGIN, REDIRECT_URI, registerClient, through } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
useClinicApp((made) => ({ t, owner, vet } = made), { members: ["vet"] });

async function connect(options: Parameters<typeof authorize>[3] = {}) {
  const as = await discover(t);
  const client = await registerClient(t);
  const authorization = await authorize(t, owner, client, options);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(t, as, client, authorization));
  return { as, client, tokens };
}

describe("discovery", () => {
  test("protected-resource and authorization-server metadata name the canonical resource and what is supported", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const r = await t.request<Record<string, unknown>>("GET", path);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ resource: `${ORIGIN}/mcp`, authorization_servers: [ORIGIN], scopes_supported: ["read", "query", "clinic_context"], bearer_methods_supported: ["header"] });
    }
    const as = await discover(t);
    expect(as).toMatchObject({
      issuer: ORIGIN,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    expect(as.token_endpoint_auth_methods_supported).toContain("none");
  });

  test("PUBLIC_URL is the issuer and resource whatever Host the request carries", async () => {
    t.context.config.publicUrl = "https://clinic.example.com";
    try {
      const r = await t.request<Record<string, unknown>>("GET", "/.well-known/oauth-protected-resource/mcp");
      expect(r.body).toMatchObject({ resource: "https://clinic.example.com/mcp", authorization_servers: ["https://clinic.example.com"] });
    } finally {
      t.context.config.publicUrl = undefined;
    }
  });

  test("a 401 from /mcp names the resource metadata and the scopes; a refused token says invalid_token", async () => {
    const none = await t.request("POST", "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" } });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp", scope="read query clinic_context"`);
    const bad = await mcpCall(t, `mat_${"x".repeat(40)}`, { method: "tools/list" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(bad.headers.get("www-authenticate")).toContain("resource_metadata=");
  });
});

describe("a connection is a principal like a key", () => {
  test("it lists and calls only the tools its scopes allow, under its own quota, and its usage rows name it", async () => {
    const { tokens } = await connect({ scopes: ["read", "clinic_context"], rateLimitPerDay: 7 });
    expect(tokens.scope).toBe("read clinic_context");
    expect(tokens.expires_in).toBe(3600);
    const list = await mcpCall(t, tokens.access_token, { method: "tools/list" });
    expect(list.status, list.text).toBe(200);
    const names = (list.body.result!.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).toContain("get_clinic_context");
    expect(names).not.toContain("query_database");
    const called = await mcpCall(t, tokens.access_token, { method: "tools/call", params: { name: "get_clinic_context", arguments: {} } });
    expect(called.status, called.text).toBe(200);
    expect(called.body.result!.isError).toBeUndefined();
    // The REST invocation carries the same quota headers as a key's.
    const viaRest = await t.request("POST", "/mcp/tools/get_clinic_context/invoke", { token: tokens.access_token, json: {} });
    expect(viaRest.status, viaRest.text).toBe(200);
    expect(viaRest.headers.get("x-ratelimit-limit")).toBe("7");
    expect(viaRest.headers.get("x-ratelimit-remaining")).toBe("5");
    const denied = await mcpCall(t, tokens.access_token, { method: "tools/call", params: { name: "query_database", arguments: { sql: "select 1" } } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp", scope="query"`);
    const connection = (await owner.as<{ data: { id: string; client_name: string; scopes: string[]; rate_limit_per_day: number }[] }>("GET", "/api/v1/mcp/connections?limit=200")).body.data.at(-1);
    expect(connection).toMatchObject({ client_name: "Test assistant", scopes: ["read", "clinic_context"], rate_limit_per_day: 7 });
    await t.context.mcp.flush();
    const rows = await t.database.query<{ tool: string; outcome: string }>("select tool, outcome from mcp_usage_log where api_key_id = $1 order by created_at, id", [connection!.id]);
    expect(rows).toEqual([{ tool: "get_clinic_context", outcome: "ok" }, { tool: "get_clinic_context", outcome: "ok" }, { tool: "query_database", outcome: "denied" }]);
    // The usage summary (the console's quota column and charts) counts it beside the keys.
    const summary = await owner.as<{ keys: { api_key_id: string; name: string; quota_used: number; calls: number }[] }>("GET", "/api/v1/mcp/usage/summary");
    expect(summary.body.keys.find((k) => k.api_key_id === connection!.id)).toMatchObject({ name: "Test assistant", quota_used: 3, calls: 3 });
  });

  test("the stored tokens are digests only", async () => {
    const { tokens } = await connect();
    const stored = await t.database.query<{ token_hash: string }>("select token_hash from oauth_tokens");
    const text = JSON.stringify(stored);
    expect(text).not.toContain(tokens.access_token);
    expect(text).toContain(new Bun.CryptoHasher("sha256").update(tokens.access_token).digest("hex"));
  });

  test("ending a connection stops its token at once; only an owner may end it or approve", async () => {
    const { tokens } = await connect();
    expect((await mcpCall(t, tokens.access_token, { method: "tools/list" })).status).toBe(200);
    const connection = (await owner.as<{ data: { id: string }[] }>("GET", "/api/v1/mcp/connections?limit=200")).body.data.at(-1);
    expect((await owner.as("DELETE", `/api/v1/mcp/connections/${connection!.id}`)).status).toBe(204);
    const after = await mcpCall(t, tokens.access_token, { method: "tools/list" });
    expect(after.status).toBe(401);
  });
});

describe("tokens", () => {
  test("the token answer is not cached; the code is single use and a reused code ends what it gave", async () => {
    const as = await discover(t);
    const client = await registerClient(t);
    const authorization = await authorize(t, owner, client);
    const first = await exchange(t, as, client, authorization);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, first);
    const again = await exchange(t, as, client, authorization);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_grant" });
    expect((await mcpCall(t, tokens.access_token, { method: "tools/list" })).status).toBe(401);
  });

  test("a wrong PKCE verifier is refused", async () => {
    const as = await discover(t);
    const client = await registerClient(t);
    const authorization = await authorize(t, owner, client);
    const r = await exchange(t, as, client, authorization, oauth.generateRandomCodeVerifier());
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: "invalid_grant" });
  });

  test("refresh rotates; the previous token works within the grace window, and after it ends the connection", async () => {
    const { as, client, tokens } = await connect();
    const rotated = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, through(t)));
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    expect((await mcpCall(t, rotated.access_token, { method: "tools/list" })).status).toBe(200);
    t.clock.advance(30_000);
    const inGrace = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, through(t));
    expect(inGrace.status).toBe(200);
    t.clock.advance(61_000);
    const late = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, through(t));
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: "invalid_grant" });
    expect((await mcpCall(t, rotated.access_token, { method: "tools/list" })).status).toBe(401);
    owner = await relogin(t, owner);
  });

  test("an access token stops after its hour; the next refresh clears it from storage", async () => {
    const { as, client, tokens } = await connect();
    t.clock.advance(3601_000);
    const r = await mcpCall(t, tokens.access_token, { method: "tools/list" });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toContain("expired");
    const digest = new Bun.CryptoHasher("sha256").update(tokens.access_token).digest("hex");
    const stored = async () => (await t.database.query("select 1 from oauth_tokens where token_hash = $1", [digest])).length;
    expect(await stored()).toBe(1);
    await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, through(t)));
    expect(await stored()).toBe(0);
    owner = await relogin(t, owner);
  });

  test("revocation (RFC 7009) ends the connection", async () => {
    const { as, client, tokens } = await connect();
    const r = await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, through(t));
    await oauth.processRevocationResponse(r);
    expect((await mcpCall(t, tokens.access_token, { method: "tools/list" })).status).toBe(401);
  });
});

describe("the authorization endpoint", () => {
  test("a wrong resource, a missing state or PKCE, or another response type shows an error page, never a redirect (RFC 9700 §4.11.2)", async () => {
    const client = await registerClient(t);
    const params = (extra: Record<string, string>) =>
      new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT_URI, code_challenge: "x".repeat(43), code_challenge_method: "S256", state: "s", ...extra });
    const cases: Record<string, string>[] = [{ resource: "https://elsewhere.example/mcp" }, { state: "" }, { code_challenge_method: "plain" }, { code_challenge: "" }, { response_type: "token" }];
    for (const extra of cases) {
      const r = await t.app.handle(new Request(`${ORIGIN}/authorize?${params(extra)}`));
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.headers.get("location")).toBeNull();
      expect(r.headers.get("content-type")).toContain("text/html");
    }
  });

  test("the origin and a trailing slash bind to the canonical resource; a loopback redirect matches on any port", async () => {
    const as = await discover(t);
    const client = await registerClient(t);
    for (const resource of [ORIGIN, `${ORIGIN}/mcp/`]) {
      const authorization = await authorize(t, owner, client, { extra: { resource } });
      expect(authorization.callback.searchParams.get("code")).toBeString();
    }
    const otherPort = await authorize(t, owner, client, { redirectUri: REDIRECT_URI.replace("8765", "9999") });
    expect(otherPort.callback.port).toBe("9999");
    void as;
  });

  test("an unknown client or an unregistered redirect URI gets an error page, never a redirect", async () => {
    const unknown = await t.app.handle(new Request(`${ORIGIN}/authorize?client_id=nobody&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`));
    expect(unknown.status).toBe(400);
    const client = await registerClient(t);
    const elsewhere = await t.app.handle(new Request(`${ORIGIN}/authorize?client_id=${client.client_id}&redirect_uri=${encodeURIComponent("https://attacker.example/cb")}`));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get("location")).toBeNull();
  });

  test("denying sends access_denied back; a vet cannot see or approve requests", async () => {
    const client = await registerClient(t);
    const denied = await authorize(t, owner, client, { approve: false });
    expect(denied.callback.searchParams.get("error")).toBe("access_denied");
    vet = await relogin(t, vet);
    const request = "x".repeat(20);
    expect((await vet.as("GET", `/api/v1/mcp/authorization-requests?request=${request}`)).status).toBe(403);
    expect((await vet.as("POST", "/api/v1/mcp/authorization-requests/decision", { json: { request, approve: true, scopes: ["read"] } })).status).toBe(403);
    expect((await vet.as("GET", "/api/v1/mcp/connections")).status).toBe(403);
  });

  test("registration refuses a plain-http redirect URI that is not loopback, in RFC 7591's form", async () => {
    const r = await t.request<{ error: string }>("POST", "/register", { json: { redirect_uris: ["http://example.com/cb"] } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_redirect_uri");
    const custom = await t.request<{ client_id: string; client_name?: string }>("POST", "/register", { json: { redirect_uris: ["cursor://anysphere.cursor-retrieval/oauth/callback"] } });
    expect(custom.status, custom.text).toBe(201);
    expect(custom.body).not.toHaveProperty("client_name");
  });
});
