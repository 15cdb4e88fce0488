import { expect } from "bun:test";
import * as oauth from "oauth4webapi";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";

export const ORIGIN = "http://localhost";
export const REDIRECT_URI = "http://127.0.0.1:8765/callback";

/** oauth4webapi talking to the app in process (plain http: the service runs on loopback here). */
export const through = (t: TestApp) => ({
  [oauth.customFetch]: (url: string, init?: RequestInit) => t.app.handle(new Request(url, init)),
  [oauth.allowInsecureRequests]: true,
});

export async function discover(t: TestApp): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(ORIGIN);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...through(t), algorithm: "oauth2" }));
}

export async function registerClient(t: TestApp, body: Record<string, unknown> = {}): Promise<oauth.Client> {
  const r = await t.request<{ client_id: string }>("POST", "/register", { json: { client_name: "Test assistant", redirect_uris: [REDIRECT_URI], ...body } });
  expect(r.status, r.text).toBe(201);
  return { client_id: r.body.client_id, token_endpoint_auth_method: "none" };
}

export interface Authorization {
  verifier: string;
  state: string;
  /** The client's redirect URI as the owner's decision sends the browser to it. */
  callback: URL;
}

/** GET /authorize, then the console's consent calls as `owner`: what the browser would do. */
export async function authorize(
  t: TestApp,
  owner: ClinicSession,
  client: oauth.Client,
  options: { scopes?: string[]; rateLimitPerDay?: number; approve?: boolean; extra?: Record<string, string>; redirectUri?: string } = {},
): Promise<Authorization> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const params = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: options.redirectUri ?? REDIRECT_URI,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    scope: "read query clinic_context",
    resource: `${ORIGIN}/mcp`,
    ...options.extra,
  });
  const start = await t.app.handle(new Request(`${ORIGIN}/authorize?${params}`));
  expect(start.status, await start.clone().text()).toBe(302);
  const location = new URL(start.headers.get("location")!);
  if (!location.hash.startsWith("#/oauth/consent")) return { verifier, state, callback: location };
  const request = new URLSearchParams(location.hash.split("?")[1]).get("request")!;
  const shown = await owner.as<{ client_name: string; requested_scopes: string[] }>("GET", `/api/v1/mcp/authorization-requests?request=${encodeURIComponent(request)}`);
  expect(shown.status, shown.text).toBe(200);
  const decided = await owner.as<{ redirect_to: string }>("POST", "/api/v1/mcp/authorization-requests/decision", {
    json: { request, approve: options.approve ?? true, scopes: options.scopes ?? shown.body.requested_scopes, rate_limit_per_day: options.rateLimitPerDay ?? 1000 },
  });
  expect(decided.status, decided.text).toBe(200);
  return { verifier, state, callback: new URL(decided.body.redirect_to) };
}

/** Exchanges the code as a client would; returns the raw response for edge checks. */
export async function exchange(t: TestApp, as: oauth.AuthorizationServer, client: oauth.Client, authorization: Authorization, verifier = authorization.verifier) {
  const params = oauth.validateAuthResponse(as, client, authorization.callback, authorization.state);
  return oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, verifier, { ...through(t), additionalParameters: { resource: `${ORIGIN}/mcp` } });
}

export const mcpCall = (t: TestApp, token: string, message: Record<string, unknown>) =>
  t.request<{ result?: Record<string, unknown>; error?: { code: number; message: string } }>("POST", "/mcp", {
    token,
    json: { jsonrpc: "2.0", id: 1, ...message },
    headers: { accept: "application/json, text/event-stream" },
  });
