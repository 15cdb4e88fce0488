/**
 * The authorization server from the attacker's side and as hosted assistants use it:
 * registration bodies as Claude.ai, ChatGPT, VS Code and Cursor send them; redirect URIs a
 * browser must never be sent to; errors shown as a page, never redirected; an honest consent
 * page decided once; one refresh chain per connection; /authorize rate limited per IP; Basic
 * credentials on /mcp answered without an error code.
 */
import { describe, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import type { TestApp } from "../helpers/app";
import { relogin, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { authorize, discover, exchange, mcpCall, ORIGIN, REDIRECT_URI, registerClient, through } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

/**
 * Registration bodies as each client sends them, from public reports:
 * - Claude.ai (hosted connector, from Anthropic's backend): anthropics/claude-ai-mcp#1043 and
 *   anthropics/claude-code#5826 (confidential `client_secret_post`, redirect to
 *   https://claude.ai/api/mcp/auth_callback).
 * - ChatGPT (connectors): the redirect https://chatgpt.com/connector_platform_oauth_redirect of
 *   OpenAI's Apps SDK authentication guide; a confidential method, as Dexter-DAO/dexter-mcp#3
 *   and garrytan/gbrain#894 report it registering.
 * - VS Code: microsoft/vscode's MCP dynamic registration (loopback redirect on port 33418 and
 *   https://vscode.dev/redirect, public client).
 * - Cursor: its private-use callback cursor://anysphere.cursor-retrieval/oauth/callback.
 */
const CLIENT_REGISTRATIONS: [string, Record<string, unknown>][] = [
  [
    "Claude.ai",
    {
      client_name: "Claude",
      redirect_uris: ["https://claude.ai/api/mcp/auth_callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
      scope: "claudeai",
    },
  ],
  [
    "ChatGPT",
    {
      client_name: "ChatGPT",
      redirect_uris: ["https://chatgpt.com/connector_platform_oauth_redirect"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      application_type: "web",
    },
  ],
  [
    "VS Code",
    {
      client_name: "Visual Studio Code",
      redirect_uris: ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
  ],
  [
    "Cursor",
    {
      client_name: "Cursor",
      redirect_uris: ["cursor://anysphere.cursor-retrieval/oauth/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      jwks_uri: "https://cursor.example/jwks.json",
      contacts: ["support@cursor.example"],
    },
  ],
];

describe("registration as hosted assistants send it", () => {
  test.each(CLIENT_REGISTRATIONS)("%s registers as a public client; the answer says so and drops what is not supported", async (_client, body) => {
    const r = await t.request<Record<string, unknown>>("POST", "/register", { json: body });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], redirect_uris: body.redirect_uris, client_name: body.client_name });
    expect(r.body).not.toHaveProperty("client_secret");
    for (const dropped of ["jwks_uri", "contacts", "application_type"]) expect(r.body).not.toHaveProperty(dropped);
    // A scope this server does not have is not echoed as if granted.
    expect(r.body.scope).toBeUndefined();
  });

  test("Claude.ai's registration then goes through consent to its https callback", async () => {
    const registered = await t.request<{ client_id: string }>("POST", "/register", { json: CLIENT_REGISTRATIONS[0]![1] });
    const authorization = await authorize(t, owner, { client_id: registered.body.client_id, token_endpoint_auth_method: "none" }, { redirectUri: "https://claude.ai/api/mcp/auth_callback" });
    expect(authorization.callback.origin).toBe("https://claude.ai");
    expect(authorization.callback.searchParams.get("code")).toStartWith("mac_");
  });
});

describe("no open redirects", () => {
  test.each([["search-ms:query=x"], ["ms-officecmd:open"], ["vbscript:msgbox(1)"], ["javascript:alert(1)"], ["data:text/html,x"], ["file:///etc/passwd"], ["http://evil.example/phish"], ["evil://claude.ai/cb"]])(
    "registration refuses the redirect URI %s",
    async (uri) => {
      const r = await t.request<{ error: string }>("POST", "/register", { json: { redirect_uris: [uri] } });
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toBe("invalid_redirect_uri");
    },
  );

  test("a private-use scheme in reverse-domain form is accepted (RFC 8252 §7.1)", async () => {
    const r = await t.request("POST", "/register", { json: { redirect_uris: ["com.example.app:/oauth/callback"] } });
    expect(r.status, r.text).toBe(201);
  });

  test("response_type=token for a client registered with an attacker's redirect is an error page, never a redirect", async () => {
    const registered = await t.request<{ client_id: string }>("POST", "/register", { json: { redirect_uris: ["https://evil.example/phish"] } });
    const r = await t.app.handle(new Request(`${ORIGIN}/authorize?${new URLSearchParams({ response_type: "token", client_id: registered.body.client_id, redirect_uri: "https://evil.example/phish", state: "s" })}`));
    expect(r.status).toBe(400);
    expect(r.headers.get("location")).toBeNull();
    expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await r.text()).not.toContain("evil.example/phish?");
  });
});

describe("an honest consent page, decided once", () => {
  async function pending(redirectUri: string, name = "Claude") {
    const registered = await t.request<{ client_id: string }>("POST", "/register", { json: { client_name: name, redirect_uris: [redirectUri] } });
    const params = new URLSearchParams({ response_type: "code", client_id: registered.body.client_id, redirect_uri: redirectUri, code_challenge: "x".repeat(43), code_challenge_method: "S256", state: "s" });
    const start = await t.app.handle(new Request(`${ORIGIN}/authorize?${params}`));
    expect(start.status, await start.clone().text()).toBe(302);
    return new URLSearchParams(new URL(start.headers.get("location")!).hash.split("?")[1]).get("request")!;
  }

  test("a self-named client is marked unverified and its redirect's exact scheme and host are shown", async () => {
    const request = await pending("com.evil.app://claude.ai/api/mcp/auth_callback");
    const shown = await owner.as<Record<string, unknown>>("GET", `/api/v1/mcp/authorization-requests?request=${encodeURIComponent(request)}`);
    expect(shown.status, shown.text).toBe(200);
    expect(shown.body).toMatchObject({ client_name: "Claude", client_name_verified: false, redirect_scheme: "com.evil.app", redirect_host: "claude.ai", redirect_uri: "com.evil.app://claude.ai/api/mcp/auth_callback" });
  });

  test("a request is approved or denied once: a second decision, or showing it again, is 409", async () => {
    const request = await pending(REDIRECT_URI, "Once");
    const decide = (approve: boolean) => owner.as<{ redirect_to: string; code?: string }>("POST", "/api/v1/mcp/authorization-requests/decision", { json: { request, approve, scopes: ["read"] } });
    const first = await decide(true);
    expect(first.status, first.text).toBe(200);
    expect(new URL(first.body.redirect_to).searchParams.get("code")).toBeString();
    for (const approve of [true, false]) {
      const again = await decide(approve);
      expect(again.status, again.text).toBe(409);
      expect(again.body.code).toBe("CONFLICT");
    }
    expect((await owner.as("GET", `/api/v1/mcp/authorization-requests?request=${encodeURIComponent(request)}`)).status).toBe(409);
    const codes = await t.database.query<{ n: number }>("select count(*)::int as n from oauth_authorization_codes where client_name = 'Once'");
    expect(codes[0]!.n).toBe(1);
  });
});

describe("one refresh chain per connection", () => {
  async function connect() {
    const as = await discover(t);
    const client = await registerClient(t);
    const authorization = await authorize(t, owner, client);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(t, as, client, authorization));
    return { as, client, tokens };
  }
  const refresh = (as: oauth.AuthorizationServer, client: oauth.Client, token: string, scope?: string) =>
    oauth.refreshTokenGrantRequest(as, client, oauth.None(), token, { ...through(t), ...(scope ? { additionalParameters: { scope } } : {}) });

  test("a refresh token replayed within its grace window gets the same successor tokens, even at the same moment", async () => {
    const { as, client, tokens } = await connect();
    const [a, b] = await Promise.all([refresh(as, client, tokens.refresh_token!), refresh(as, client, tokens.refresh_token!)]);
    const first = (await a.json()) as Record<string, unknown>;
    const second = (await b.json()) as Record<string, unknown>;
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    t.clock.advance(30_000);
    const third = (await (await refresh(as, client, tokens.refresh_token!)).json()) as Record<string, unknown>;
    for (const replay of [second, third]) {
      expect(replay.access_token).toBe(first.access_token);
      expect(replay.refresh_token).toBe(first.refresh_token);
    }
    expect(third.expires_in).toBe(3570);
    const live = await t.database.query<{ n: number }>("select count(*)::int as n from oauth_tokens t join oauth_tokens o on o.connection_id = t.connection_id where t.token_hash = $1 and o.kind = 'refresh' and o.rotated_at is null", [
      new Bun.CryptoHasher("sha256").update(String(first.refresh_token)).digest("hex"),
    ]);
    expect(live[0]!.n).toBe(1);
    // The chain goes on from the one successor.
    const next = await refresh(as, client, String(first.refresh_token));
    expect(next.status).toBe(200);
    expect((await mcpCall(t, ((await next.json()) as { access_token: string }).access_token, { method: "tools/list" })).status).toBe(200);
    owner = await relogin(t, owner);
  });

  test("a refresh token presented after its grace window ends the connection, successors included", async () => {
    const { as, client, tokens } = await connect();
    const rotated = (await (await refresh(as, client, tokens.refresh_token!)).json()) as { access_token: string; refresh_token: string };
    t.clock.advance(61_000);
    const late = await refresh(as, client, tokens.refresh_token!);
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: "invalid_grant" });
    expect((await mcpCall(t, rotated.access_token, { method: "tools/list" })).status).toBe(401);
    expect((await refresh(as, client, rotated.refresh_token)).status).toBe(400);
    owner = await relogin(t, owner);
  });

  test("a refresh may narrow the scopes (scope=read gives read only) and never widen them", async () => {
    const { as, client, tokens } = await connect();
    const narrowed = (await (await refresh(as, client, tokens.refresh_token!, "read")).json()) as { access_token: string; refresh_token: string; scope: string };
    expect(narrowed.scope).toBe("read");
    const list = await mcpCall(t, narrowed.access_token, { method: "tools/list" });
    const names = (list.body.result!.tools as { name: string }[]).map((tool) => tool.name);
    expect(names).not.toContain("query_database");
    expect(names).not.toContain("get_clinic_context");
    const wider = await refresh(as, client, narrowed.refresh_token, "read query");
    expect(wider.status).toBe(400);
    expect(await wider.json()).toMatchObject({ error: "invalid_scope" });
    const unasked = (await (await refresh(as, client, narrowed.refresh_token)).json()) as { scope: string };
    expect(unasked.scope).toBe("read");
  });
});

describe("the edges", () => {
  test("/authorize is rate limited per IP like /token", async () => {
    const limit = t.context.config.limits.oauthPerIpPerMinute;
    t.context.config.limits.oauthPerIpPerMinute = 3;
    try {
      t.clock.advance(61_000);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await t.app.handle(new Request(`${ORIGIN}/authorize?client_id=nobody`))).status);
      expect(statuses).toEqual([400, 400, 400, 429]);
      expect((await t.request("POST", "/token", { body: "grant_type=refresh_token&refresh_token=x", headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(429);
    } finally {
      t.context.config.limits.oauthPerIpPerMinute = limit;
      t.clock.advance(61_000);
    }
    owner = await relogin(t, owner);
  });

  test("Basic credentials on /mcp get a Bearer challenge without an error code (RFC 6750 §3.1)", async () => {
    const r = await t.request("POST", "/mcp", { json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream", authorization: `Basic ${btoa("user:pass")}` } });
    expect(r.status).toBe(401);
    const challenge = r.headers.get("www-authenticate")!;
    expect(challenge).toStartWith("Bearer ");
    expect(challenge).not.toContain("error=");
    expect(challenge).toContain("resource_metadata=");
  });
});
