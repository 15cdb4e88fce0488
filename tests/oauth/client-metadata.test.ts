/**
 * Client ID Metadata Documents: a client identified by the URL of its metadata is fetched at
 * authorization (loopback http allowed here only because PUBLIC_URL is loopback http); a
 * document that does not name itself, a redirect URI it does not list, or a private address is
 * refused with an error page, never a redirect. Documents are kept as their caching headers
 * allow (at most an hour); without PUBLIC_URL no loopback document is ever requested, whatever
 * Host the request carries.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { authorize, discover, exchange, mcpCall, ORIGIN, REDIRECT_URI } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { config: { publicUrl: ORIGIN } });

let documents: ReturnType<typeof Bun.serve>;
let base = "";
/** Every path the document server was asked for, in order. */
const asked: string[] = [];
beforeAll(() => {
  documents = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      asked.push(url.pathname);
      const self = `${base}${url.pathname}`;
      if (url.pathname === "/cached.json") return Response.json({ client_id: self, client_name: "Cached", redirect_uris: [REDIRECT_URI] }, { headers: { "cache-control": "public, max-age=600" } });
      if (url.pathname === "/year.json") return Response.json({ client_id: self, redirect_uris: [REDIRECT_URI] }, { headers: { "cache-control": "max-age=31536000" } });
      if (url.pathname === "/uncached.json") return Response.json({ client_id: self, redirect_uris: [REDIRECT_URI] }, { headers: { "cache-control": "no-store" } });
      if (url.pathname === "/good.json") return Response.json({ client_id: self, client_name: "Metadata assistant", redirect_uris: [REDIRECT_URI] });
      if (url.pathname === "/impostor.json") return Response.json({ client_id: "https://someone.else/client.json", redirect_uris: [REDIRECT_URI] });
      if (url.pathname === "/huge.json") return Response.json({ client_id: self, redirect_uris: [REDIRECT_URI], padding: "x".repeat(64 * 1024) });
      return new Response("not found", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${documents.port}`;
});
afterAll(() => documents.stop(true));

const start = (clientId: string, redirectUri = REDIRECT_URI) =>
  t.app.handle(new Request(`${ORIGIN}/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, code_challenge: "x".repeat(43), code_challenge_method: "S256", state: "s" })}`));

test("a client known only by its metadata document URL is approved and gets tokens", async () => {
  const as = await discover(t);
  const client: oauth.Client = { client_id: `${base}/good.json`, token_endpoint_auth_method: "none" };
  const authorization = await authorize(t, owner, client);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(t, as, client, authorization));
  expect((await mcpCall(t, tokens.access_token, { method: "tools/list" })).status).toBe(200);
  const [connection] = (await owner.as<{ data: { client_name: string }[] }>("GET", "/api/v1/mcp/connections")).body.data;
  expect(connection!.client_name).toBe("Metadata assistant");
});

test.each([
  ["a document whose client_id is not its URL", () => start(`${base}/impostor.json`), "client_id"],
  ["a redirect URI the document does not list", () => start(`${base}/good.json`, "https://attacker.example/cb"), "not registered"],
  ["a document over the size limit", () => start(`${base}/huge.json`), "larger than"],
  ["a private address", () => start("https://10.1.2.3/client.json"), "not a public address"],
  ["a link-local address", () => start("https://169.254.169.254/latest/meta-data"), "not a public address"],
])("%s is refused with an error page", async (_label, send, reason) => {
  const r = await send();
  expect(r.status).toBe(400);
  expect(r.headers.get("location")).toBeNull();
  expect(await r.text()).toContain(reason);
});

test.each([
  ["PUBLIC_URL is not loopback http", "https://clinic.example.com"],
  ["PUBLIC_URL is unset, whatever the request's Host says", undefined],
])("a loopback client id is refused, and no request reaches the port, when %s", async (_label, publicUrl) => {
  t.context.config.publicUrl = publicUrl;
  const before = asked.length;
  try {
    for (const host of ["localhost", "127.0.0.1:3000", `127.0.0.1:${documents.port}`]) {
      const r = await t.app.handle(
        new Request(`http://${host}/authorize?${new URLSearchParams({ response_type: "code", client_id: `${base}/good.json`, redirect_uri: REDIRECT_URI, code_challenge: "x".repeat(43), code_challenge_method: "S256", state: "s" })}`, { headers: { host } }),
      );
      expect(r.status).toBe(400);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).toContain("PUBLIC_URL");
    }
    expect(asked.length).toBe(before);
  } finally {
    t.context.config.publicUrl = ORIGIN;
  }
});

test("a document is kept as its Cache-Control allows, at most an hour; no-store is fetched each time", async () => {
  const count = (path: string) => asked.filter((p) => p === path).length;
  for (let i = 0; i < 3; i++) expect((await start(`${base}/cached.json`)).status).toBe(302);
  expect(count("/cached.json")).toBe(1);
  t.clock.advance(601_000);
  expect((await start(`${base}/cached.json`)).status).toBe(302);
  expect(count("/cached.json")).toBe(2);

  expect((await start(`${base}/year.json`)).status).toBe(302);
  t.clock.advance(3_599_000);
  expect((await start(`${base}/year.json`)).status).toBe(302);
  expect(count("/year.json")).toBe(1);
  t.clock.advance(2_000);
  expect((await start(`${base}/year.json`)).status).toBe(302);
  expect(count("/year.json")).toBe(2);

  for (let i = 0; i < 2; i++) expect((await start(`${base}/uncached.json`)).status).toBe(302);
  expect(count("/uncached.json")).toBe(2);
});

test.each([["https://[::127.0.0.1]/client.json"], ["https://[::10.0.0.1]/client.json"], ["https://[::ffff:127.0.0.1]/client.json"]])("%s (an IPv4 address inside IPv6) is not a public address", async (clientId) => {
  const r = await start(clientId);
  expect(r.status).toBe(400);
  expect(await r.text()).toContain("not a public address");
});
