/**
 * The official TypeScript SDK's client OAuth (`@modelcontextprotocol/sdk/client/auth.js`) end to
 * end against the app, knowing only `{origin}/mcp`: discovery, dynamic registration, the owner's
 * approval (the console's calls), tokens, a tool call, a refresh, and an ended connection.
 */
import { expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { ORIGIN, REDIRECT_URI } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

/** What an assistant keeps between runs, in memory; `authorizationUrl` is where it would open the browser. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  stored: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return { client_name: "SDK assistant", redirect_uris: [REDIRECT_URI], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state() {
    return "sdk-state-0123456789";
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const inApp = (url: string | URL, init?: RequestInit) => t.app.handle(new Request(String(url), init));

/** The browser's part: follow /authorize to the consent page, approve as the owner, come back with the code. */
async function ownerApproves(authorizationUrl: URL, scopes: string[]): Promise<string> {
  const start = await inApp(authorizationUrl);
  expect(start.status).toBe(302);
  const consent = new URL(start.headers.get("location")!);
  const request = new URLSearchParams(consent.hash.split("?")[1]).get("request")!;
  const decided = await owner.as<{ redirect_to: string }>("POST", "/api/v1/mcp/authorization-requests/decision", { json: { request, approve: true, scopes, rate_limit_per_day: 50 } });
  expect(decided.status, decided.text).toBe(200);
  const back = new URL(decided.body.redirect_to);
  expect(back.searchParams.get("state")).toBe("sdk-state-0123456789");
  expect(back.searchParams.get("iss")).toBe(ORIGIN);
  return back.searchParams.get("code")!;
}

test("the SDK client discovers, registers, is approved, calls a tool, refreshes, and stops when the owner ends the connection", async () => {
  const provider = new MemoryProvider();
  const serverUrl = `${ORIGIN}/mcp`;
  expect(await auth(provider, { serverUrl, fetchFn: inApp })).toBe("REDIRECT");
  expect(provider.client?.client_id).toStartWith("mcp_client_");
  expect(provider.authorizationUrl!.searchParams.get("code_challenge_method")).toBe("S256");
  expect(provider.authorizationUrl!.searchParams.get("resource")).toBe(serverUrl);
  const code = await ownerApproves(provider.authorizationUrl!, ["read", "clinic_context"]);
  expect(await auth(provider, { serverUrl, authorizationCode: code, fetchFn: inApp })).toBe("AUTHORIZED");
  const firstAccess = provider.stored!.access_token;

  const client = new Client({ name: "sdk-oauth-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider, fetch: inApp }));
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  expect(tools).toContain("get_clinic_context");
  expect(tools).not.toContain("query_database");
  const result = await client.callTool({ name: "get_clinic_context", arguments: {} });
  expect(result.isError).toBeUndefined();
  await client.close();

  // A refresh: the SDK exchanges its refresh token for a new pair.
  provider.stored = { ...provider.stored!, access_token: "expired" };
  expect(await auth(provider, { serverUrl, fetchFn: inApp })).toBe("AUTHORIZED");
  expect(provider.stored!.access_token).not.toBe(firstAccess);
  expect(provider.stored!.access_token).toStartWith("mat_");

  const connections = await owner.as<{ data: { id: string }[] }>("GET", "/api/v1/mcp/connections");
  expect((await owner.as("DELETE", `/api/v1/mcp/connections/${connections.body.data[0]!.id}`)).status).toBe(204);
  const after = await inApp(serverUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${provider.stored!.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(after.status).toBe(401);
});
