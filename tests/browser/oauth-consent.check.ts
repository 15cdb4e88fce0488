/**
 * An assistant connects with OAuth and the owner approves it in the console, in a real browser:
 * the official SDK client's OAuth (`@modelcontextprotocol/sdk/client/auth.js`) against a
 * spawned server, headless Chromium following the authorization URL to the console's consent
 * page (sign-in first), ticking scopes and a quota, approving, and the code reaching the client's
 * loopback redirect; then tools through the connection, the connection on the MCP page, and
 * its end from there. Then a browser-based client on an origin listed in MCP_ALLOWED_ORIGINS runs
 * the whole flow from its own page: the 401's WWW-Authenticate, both metadata documents,
 * registration, authorization, the token and MCP calls, every one across origins.
 * `bun run test:browser` runs it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { call, startServer } from "../helpers/server-process";
import { assert, BrowserRun } from "./harness";

const PASSWORD = "a long password";
const API_PLACEHOLDER = "__API__";

/**
 * A browser-based MCP client (like the Inspector) on its own origin: from a 401 it discovers
 * the server, registers, sends the browser to authorize, and on its callback exchanges the code
 * and lists the tools, all with fetch across origins.
 */
const BROWSER_CLIENT_PAGE = `<!doctype html><meta charset="utf-8"><title>browser client</title><pre id="out">…</pre><script type="module">
const api = "${API_PLACEHOLDER}";
const out = (text) => (document.getElementById("out").textContent = text);
const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
const mcp = (body, token) => fetch(api + "/mcp", { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(token ? { authorization: "Bearer " + token } : {}) }, body: JSON.stringify(body) });
async function start() {
  const first = await mcp({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const challenge = first.headers.get("www-authenticate");
  if (!challenge) throw new Error("WWW-Authenticate is not readable (" + first.status + ")");
  const resource = await (await fetch(/resource_metadata="([^"]+)"/.exec(challenge)[1])).json();
  const server = await (await fetch(resource.authorization_servers[0] + "/.well-known/oauth-authorization-server")).json();
  const redirect = location.origin + "/callback";
  const client = await (await fetch(server.registration_endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "Browser-based client", redirect_uris: [redirect] }) })).json();
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challengeS256 = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem("flow", JSON.stringify({ verifier, client_id: client.client_id, token_endpoint: server.token_endpoint, resource: resource.resource, redirect }));
  location.assign(server.authorization_endpoint + "?" + new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: redirect, code_challenge: challengeS256, code_challenge_method: "S256", state: "browser-state", scope: "read clinic_context", resource: resource.resource }));
}
async function finish() {
  const flow = JSON.parse(sessionStorage.getItem("flow"));
  const code = new URLSearchParams(location.search).get("code");
  const form = new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: flow.verifier, redirect_uri: flow.redirect, client_id: flow.client_id, resource: flow.resource });
  const tokens = await (await fetch(flow.token_endpoint, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form })).json();
  const listed = await (await mcp({ jsonrpc: "2.0", id: 2, method: "tools/list" }, tokens.access_token)).json();
  out("OK " + listed.result.tools.map((tool) => tool.name).join(","));
}
(location.pathname === "/callback" ? finish() : start()).catch((error) => out("FAILED " + error));
</script>`;

const run = await BrowserRun.launch();
const dataDir = mkdtempSync(join(tmpdir(), "vet-oauth-consent-"));
let apiBase = "";
const browserClient = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(BROWSER_CLIENT_PAGE.replace(API_PLACEHOLDER, apiBase), { headers: { "content-type": "text/html" } }) });
const browserClientOrigin = `http://127.0.0.1:${browserClient.port}`;
const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn", MCP_ALLOWED_ORIGINS: browserClientOrigin });
const base = server.baseUrl.replace("localhost", "127.0.0.1");
apiBase = base;
await call(base, "POST", "/api/v1/auth/register", { json: { email: "owner@consent.test", password: PASSWORD, name: "Owner", clinic_name: "Consent Clinic" } });

// The client's loopback redirect: it receives the code the browser brings back.
let received: URL | undefined;
const callback = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/callback") received = url; // not the browser's favicon request
    return new Response("You can close this window.");
  },
});
const redirectUrl = `http://127.0.0.1:${callback.port}/callback`;

class Provider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  stored: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return { client_name: "Browser-tested assistant", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  // This server requires state (the SDK sends one only when the provider makes it).
  state = () => crypto.randomUUID();
  clientInformation = () => this.client;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.client = info);
  tokens = () => this.stored;
  saveTokens = (tokens: OAuthTokens) => void (this.stored = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

const provider = new Provider();
const serverUrl = `${base}/mcp`;
try {
  const context = await run.context();
  const page = await context.newPage();

  await run.check("the SDK client discovers and registers, and the owner approves it on the consent page after signing in", async () => {
    assert((await auth(provider, { serverUrl })) === "REDIRECT", "the client should be sent to authorize");
    await page.goto(provider.authorizationUrl!.toString());
    await page.locator('input[name="email"]').fill("owner@consent.test");
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    await page.getByTestId("client-name").waitFor();
    assert((await page.getByTestId("client-name").textContent()) === "Browser-tested assistant", "the consent page names the client");
    assert((await page.getByTestId("redirect-host").textContent()) === `127.0.0.1:${callback.port}`, "the consent page shows where the browser goes back");
    assert(await page.getByTestId("loopback-warning").isVisible(), "a loopback-only client is warned about");
    await page.locator('input[name="scope"][value="query"]').uncheck();
    await page.locator('input[name="rate_limit_per_day"]').fill("25");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForURL(/\/callback\?/);
    const back = received as URL | undefined;
    const code = back?.searchParams.get("code");
    assert(code, "the code reaches the client's redirect");
    assert(back!.searchParams.get("iss") === base, "the redirect names the issuer");
    assert((await auth(provider, { serverUrl, authorizationCode: code })) === "AUTHORIZED", "the code is exchanged");
  });

  await run.check("a browser-based client on an MCP_ALLOWED_ORIGINS origin runs the whole flow from its page, across origins", async () => {
    const tab = await context.newPage();
    await tab.goto(`${browserClientOrigin}/`);
    await tab.getByTestId("client-name").waitFor({ timeout: 15_000 });
    assert((await tab.getByTestId("client-name").textContent()) === "Browser-based client", "the consent page names the browser-based client");
    assert(await tab.getByTestId("unverified-name").isVisible(), "its self-chosen name is marked unverified");
    await tab.getByRole("button", { name: "Approve" }).click();
    await tab.waitForURL(/\/callback\?/);
    await tab.waitForFunction(`!document.getElementById("out").textContent.startsWith("…")`, undefined, { timeout: 15_000 });
    const text = await tab.locator("#out").innerText();
    assert(/^OK .*get_clinic_context/.test(text) && !text.includes("query_database"), `the page says: ${text}`);
    await tab.close();
  });

  await run.check("the connection lists the tools its ticked scopes allow and calls one", async () => {
    const client = new Client({ name: "browser-oauth", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    assert(tools.includes("get_clinic_context") && !tools.includes("query_database"), `tools: ${tools.join(", ")}`);
    const result = await client.callTool({ name: "get_clinic_context", arguments: {} });
    assert(!result.isError, "the tool call succeeds");
    await client.close();
  });

  await run.check("the MCP page shows the connection beside the keys, and ending it stops its token at once", async () => {
    await page.goto(`${base}/#/mcp`);
    const row = page.getByTestId("connections").locator("tr", { hasText: "Browser-tested assistant" });
    await row.waitFor();
    assert((await row.textContent())?.includes("/ 25"), "the quota column shows the approved daily quota");
    await row.getByRole("button", { name: /End/ }).click();
    await row.getByText("Ended").waitFor();
    const after = await fetch(serverUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${provider.stored!.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert(after.status === 401, `an ended connection's token is refused (got ${after.status})`);
  });
  await run.check("the console sends no Referer, allows only its own scripts and styles, and cannot be framed by another site", async () => {
    const answer = await fetch(`${base}/`);
    const policy = answer.headers.get("content-security-policy") ?? "";
    assert(answer.headers.get("referrer-policy") === "no-referrer", "Referrer-Policy: no-referrer");
    assert(answer.headers.get("x-content-type-options") === "nosniff", "X-Content-Type-Options: nosniff");
    assert(policy.includes("script-src 'self'") && policy.includes("style-src 'self'"), `a policy of its own scripts and styles: ${policy}`);
    // Another origin (this page is about:blank, its own opaque origin) frames the consent page:
    // the browser refuses to load it at all, so the console's document never exists in the frame.
    const framing = await context.newPage();
    const refusals: string[] = [];
    framing.on("console", (message) => void (/frame-ancestors/.test(message.text()) && refusals.push(message.text())));
    await framing.setContent(`<iframe id="victim" src="${base}/#/oauth/consent" width="800" height="600"></iframe>`);
    const frame = await (await framing.locator("#victim").elementHandle())!.contentFrame();
    await frame!.waitForLoadState("load");
    assert((await frame!.locator("#app").count()) === 0, "the console's page is not loaded inside the frame");
    assert(refusals.length > 0, "the browser reports the frame-ancestors refusal");
    await framing.close();
  });
} finally {
  callback.stop(true);
  browserClient.stop(true);
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(await run.finish());
