import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cookieSecureFrom, loadConfig } from "../../src/config";
import { plainHttpWarning } from "../../src/cli/serve";
import { createTestApp, type TestApp } from "../helpers/app";
import { PASSWORD, registerClinic } from "../helpers/clinic";

/** The refresh cookie's Set-Cookie header from a login answered by `send`. */
async function loginCookie(send: (request: Request) => Promise<Response>, base: string, email: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await send(new Request(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ email, password: PASSWORD }) }));
  expect(response.status, await response.clone().text()).toBe(200);
  return response.headers.get("set-cookie") ?? "";
}

describe("COOKIE_SECURE=auto (the default)", () => {
  let t: TestApp;
  let email: string;
  let listener: { url: string; stop(): void };
  beforeAll(async () => {
    t = await createTestApp({ config: { cookieSecure: "auto", trustedProxies: ["127.0.0.1"] } });
    email = (await registerClinic(t)).user.email;
    // A real listener, so the proxy check sees the caller's address (127.0.0.1: the "proxy").
    t.app.listen({ hostname: "127.0.0.1", port: 0 });
    listener = { url: `http://127.0.0.1:${t.app.server!.port}`, stop: () => void t.app.stop(true) };
  }, 30_000);
  afterAll(async () => {
    listener.stop();
    await t.close();
  }, 30_000);

  test("is the default, and the setting takes only auto, true or false", () => {
    expect(loadConfig({ DATA_DIR: "/nonexistent", JWT_SECRET: "x".repeat(32) }).cookieSecure).toBe("auto");
    expect(cookieSecureFrom("false")).toBe(false);
    expect(() => cookieSecureFrom("maybe")).toThrow(/COOKIE_SECURE/);
  });

  test("plain http (the clinic's LAN): the cookie is not Secure, still HttpOnly and SameSite=Strict", async () => {
    const cookie = await loginCookie((r) => t.app.handle(r), "http://192.168.1.20:3000", email);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).not.toContain("Secure");
  });

  test("https reaching the service directly: Secure", async () => {
    expect(await loginCookie((r) => t.app.handle(r), "https://clinic.example", email)).toContain("Secure");
  });

  test("X-Forwarded-Proto: https is believed only from a proxy in TRUSTED_PROXIES", async () => {
    // Through the listener: the caller is 127.0.0.1, a trusted proxy.
    expect(await loginCookie((r) => fetch(r), listener.url, email, { "x-forwarded-proto": "https" })).toContain("Secure");
    // Handled in process: the caller is no proxy, so its header says nothing.
    expect(await loginCookie((r) => t.app.handle(r), "http://localhost", email, { "x-forwarded-proto": "https" })).not.toContain("Secure");
  });
});

describe("COOKIE_SECURE=false and true", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { cookieSecure: true } });
  }, 30_000);
  afterAll(() => t.close(), 30_000);

  test("true marks the cookie Secure even over plain http", async () => {
    const { user } = await registerClinic(t);
    expect(await loginCookie((r) => t.app.handle(r), "http://192.168.1.20:3000", user.email)).toContain("Secure");
  });
});

describe("the start-up warning", () => {
  test("names plain http on a non-loopback address, and only that", () => {
    expect(plainHttpWarning({ host: "0.0.0.0" })).toMatch(/passwords cross the LAN in clear: put TLS in front, see Deployment/);
    expect(plainHttpWarning({ host: "192.168.1.20", publicUrl: "http://192.168.1.20:3000" })).not.toBeNull();
    expect(plainHttpWarning({ host: "127.0.0.1" })).toBeNull();
    expect(plainHttpWarning({ host: "::1" })).toBeNull();
    expect(plainHttpWarning({ host: "0.0.0.0", publicUrl: "https://clinic.example.com" })).toBeNull();
  });

  test("PUBLIC_URL is required with NODE_ENV=production", () => {
    expect(() => loadConfig({ NODE_ENV: "production", DATA_DIR: "/nonexistent", JWT_SECRET: "x".repeat(32), SECRETS_KEY: "y".repeat(32) })).toThrow(/PUBLIC_URL is required when NODE_ENV=production/);
  });
});
