import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/config";
import type { SessionView } from "../../src/modules/auth/model";
import { createTestApp, type Answer, type ErrorBody, type TestApp } from "../helpers/app";
import { PASSWORD, registerClinic, uniqueEmail } from "../helpers/clinic";

/** A browser-based MCP client's origin, listed in MCP_ALLOWED_ORIGINS. */
const BROWSER_CLIENT = "http://localhost:6274";
let t: TestApp;
beforeAll(async () => {
  // The contract's limits, except a per-user limit small enough to reach.
  t = await createTestApp({ config: { limits: { ...DEFAULT_LIMITS, perUserPerMinute: 5 }, mcpAllowedOrigins: [BROWSER_CLIENT] } });
});
afterAll(() => t.close());

const login = (email: string, password: string) => t.request<Answer<SessionView>>("POST", "/api/v1/auth/login", { json: { email, password } });

describe("login and register limits", () => {
  test("failed logins slow down the (email, address) pair they come from, with growing delays", async () => {
    const owner = await registerClinic(t);
    for (let i = 0; i < 5; i++) expect((await login(owner.user.email, "wrong password")).status).toBe(401);
    const waiting = await login(owner.user.email, PASSWORD);
    expect(waiting.status, waiting.text).toBe(429);
    expect(waiting.body.code).toBe("TOO_MANY_ATTEMPTS");
    expect(waiting.headers.get("retry-after")).toBe("1");
    // A further failure doubles the wait (tests/install/login-throttle.test.ts follows it further).
    t.clock.advance(1000);
    expect((await login(owner.user.email, "wrong password")).status).toBe(401);
    const next = await login(owner.user.email, PASSWORD);
    expect(next.status).toBe(429);
    expect(next.headers.get("retry-after")).toBe("2");
    t.clock.advance(2000);
    expect((await login(owner.user.email, PASSWORD)).status).toBe(200);
    t.clock.advance(60_000);
  });

  test("10 attempts per minute per IP, with rate-limit headers", async () => {
    t.clock.advance(60_000);
    let last;
    for (let i = 0; i < 10; i++) {
      last = await login(uniqueEmail(), PASSWORD);
      expect(last.status, last.text).toBe(401);
      expect(last.headers.get("x-ratelimit-remaining")).toBe(String(9 - i));
    }
    expect(Number(last!.headers.get("x-ratelimit-reset"))).toBeGreaterThan(t.clock.now().getTime() / 1000);
    const refused = await t.request<ErrorBody>("POST", "/api/v1/auth/register", { json: { email: uniqueEmail(), password: PASSWORD, name: "N", clinic_name: "C" } });
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe("TOO_MANY_ATTEMPTS");
    expect(refused.headers.get("retry-after")).toBeTruthy();
    const [row] = await t.database.query<{ n: number }>("select count(*)::int as n from users where email = $1", ["nobody"]);
    expect(row!.n).toBe(0);
    t.clock.advance(60_000);
    expect((await login(uniqueEmail(), PASSWORD)).status).toBe(401);
  });
});

describe("per-user limit", () => {
  test("past the limit calls are 429 RATE_LIMIT_EXCEEDED; the window slides", async () => {
    t.clock.advance(60_000);
    const owner = await registerClinic(t);
    for (let i = 0; i < 5; i++) {
      const r = await owner.as("GET", "/api/v1/auth/me");
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(4 - i));
      expect(r.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/);
    }
    const refused = await owner.as<ErrorBody>("GET", "/api/v1/auth/me");
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    t.clock.advance(60_001);
    expect((await owner.as("GET", "/api/v1/auth/me")).status).toBe(200);
  });
});

describe("the OAuth server's open endpoints", () => {
  const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
  const register = (name: string) => t.request<ErrorBody>("POST", "/register", { json: { client_name: name, redirect_uris: ["http://127.0.0.1:8765/callback"] } });

  test("registrations, token and revocation calls share 30 a minute per IP: past it 429 with Retry-After and CORS, nothing registered; the window slides", async () => {
    t.clock.advance(60_000);
    const before = await t.count("oauth_clients");
    for (let i = 0; i < 29; i++) expect((await register(`Flood ${i}`)).status).toBe(201);
    const token = await t.request("POST", "/token", form({ grant_type: "refresh_token", refresh_token: "not-a-token", client_id: "nobody" }));
    expect(token.status, token.text).toBe(400);
    expect(token.headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await t.request<ErrorBody>("POST", "/register", { json: { client_name: "One too many", redirect_uris: ["http://127.0.0.1:8765/callback"] }, headers: { origin: BROWSER_CLIENT } });
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe("TOO_MANY_ATTEMPTS");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // A browser-based client must be able to read the refusal.
    expect(refused.headers.get("access-control-allow-origin")).toBe(BROWSER_CLIENT);
    expect((await t.request("POST", "/revoke", form({ token: "x" }))).status).toBe(429);
    expect((await t.request("POST", "/token", form({ grant_type: "refresh_token", refresh_token: "x", client_id: "nobody" }))).status).toBe(429);
    expect(await t.count("oauth_clients")).toBe(before + 29);
    // Logging in is a budget of its own: assistants refreshing tokens do not lock staff out.
    expect((await login(uniqueEmail(), PASSWORD)).status).toBe(401);
    t.clock.advance(60_001);
    expect((await register("Next minute")).status).toBe(201);
  });
});
