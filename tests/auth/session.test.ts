import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { MeView, SessionView } from "../../src/modules/auth/model";
import { createTestApp, TEST_SECRET, type Answer, type ErrorBody, type Refusal, type TestApp, type ValidationDetails } from "../helpers/app";
import { PASSWORD, refreshCookieOf, registerClinic, uniqueEmail } from "../helpers/clinic";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const countRows = (table: "users" | "clinics" | "refresh_tokens") => t.count(table);

const refresh = (cookie: string) => t.request<Answer<SessionView>>("POST", "/api/v1/auth/refresh", { headers: { cookie } });

describe("session life cycle", () => {
  test("register → login → me → refresh → reuse detection → logout", async () => {
    const email = uniqueEmail("Life");
    const registered = await t.request<SessionView>("POST", "/api/v1/auth/register", {
      json: { email, password: PASSWORD, name: "Ana Pérez", clinic_name: "Clínica Los Andes", timezone: "America/Santiago" },
    });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.body).toMatchObject({ token_type: "Bearer", expires_in: 900, user: { email: email.toLowerCase(), role: "owner" } });
    expect(registered.body.clinic).toMatchObject({ plan: "standard", currency: "CLP", tax_rate_bps: 1900, timezone: "America/Santiago" });

    const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: { email: email.toUpperCase(), password: PASSWORD } });
    expect(login.status, login.text).toBe(200);
    const cookie = login.headers.get("set-cookie")!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/api/v1/auth");
    expect(cookie).toContain("Max-Age=604800");
    expect(cookie).toContain("Secure");

    const me = await t.request<MeView>("GET", "/api/v1/auth/me", { token: login.body.access_token });
    expect(me.status, me.text).toBe(200);
    expect(me.body.user.id).toBe(registered.body.user.id);
    expect(me.body.clinic.name).toBe("Clínica Los Andes");

    const first = refreshCookieOf(login);
    const rotated = await refresh(first);
    expect(rotated.status, rotated.text).toBe(200);
    const second = refreshCookieOf(rotated);
    expect(second).not.toBe(first);
    expect((await t.request("GET", "/api/v1/auth/me", { token: rotated.body.access_token })).status).toBe(200);

    const reused = await refresh(first);
    expect(reused.status, reused.text).toBe(401);
    expect(reused.body.code).toBe("REFRESH_TOKEN_REUSED");
    // The newer token of the same family died with it.
    const afterReuse = await refresh(second);
    expect(afterReuse.status, afterReuse.text).toBe(401);

    const again = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: { email, password: PASSWORD } });
    const logout = await t.request("POST", "/api/v1/auth/logout", { token: again.body.access_token, headers: { cookie: refreshCookieOf(again) } });
    expect(logout.status, logout.text).toBe(204);
    expect(logout.headers.get("set-cookie")).toContain("Max-Age=0");
    const afterLogout = await refresh(refreshCookieOf(again));
    expect(afterLogout.status, afterLogout.text).toBe(401);
  });

  test("a login's family is independent of other logins", async () => {
    const owner = await registerClinic(t);
    const other = await t.request("POST", "/api/v1/auth/login", { json: { email: owner.user.email, password: PASSWORD } });
    await refresh(owner.refreshCookie);
    expect((await refresh(owner.refreshCookie)).body.code).toBe("REFRESH_TOKEN_REUSED");
    expect((await refresh(refreshCookieOf(other))).status).toBe(200);
  });

  test("refresh without a cookie, with garbage, or after 7 days is 401", async () => {
    expect((await t.request<ErrorBody>("POST", "/api/v1/auth/refresh")).body.code).toBe("AUTH_REQUIRED");
    expect((await refresh("service_refresh=nonsense")).body.code).toBe("INVALID_TOKEN");
    const owner = await registerClinic(t);
    t.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const expired = await refresh(owner.refreshCookie);
    expect(expired.status, expired.text).toBe(401);
    expect(expired.body.code).toBe("TOKEN_EXPIRED");
  });
});

describe("access tokens", () => {
  const forge = async (header: object, payload: object, secret: string, alg = "SHA-256") => {
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const input = `${enc(header)}.${enc(payload)}`;
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: alg }, false, ["sign"]);
    const sig = Buffer.from(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(input))).toString("base64url");
    return `${input}.${sig}`;
  };

  test("expires after 15 minutes of the injected clock", async () => {
    const owner = await registerClinic(t);
    t.clock.advance(14 * 60 * 1000);
    expect((await owner.as("GET", "/api/v1/auth/me")).status).toBe(200);
    t.clock.advance(61 * 1000);
    const r = await owner.as<ErrorBody>("GET", "/api/v1/auth/me");
    expect(r.status, r.text).toBe(401);
    expect(r.body.code).toBe("TOKEN_EXPIRED");
    expect(r.headers.get("www-authenticate")).toBe("Bearer");
  });

  test("tampered, unsigned, wrongly signed and other-algorithm tokens are 401 INVALID_TOKEN", async () => {
    const owner = await registerClinic(t);
    const [header, payload, signature] = owner.token.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, role: "owner", sub: "x" })).toString("base64url")}.${signature}`;
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    const wrongSecret = await forge({ alg: "HS256", typ: "JWT" }, claims, "another-secret-that-is-32-bytes-long!!");
    const hs512 = await forge({ alg: "HS512", typ: "JWT" }, claims, TEST_SECRET, "SHA-512");
    for (const token of [tampered, none, wrongSecret, hs512, "not.a.jwt", "abc"]) {
      const r = await t.request<ErrorBody>("GET", "/api/v1/auth/me", { token });
      expect(r.status, `${token}: ${r.text}`).toBe(401);
      expect(r.body.code, r.text).toBe("INVALID_TOKEN");
    }
    const sameSecretRightAlg = await forge({ alg: "HS256", typ: "JWT" }, claims, TEST_SECRET);
    expect((await t.request("GET", "/api/v1/auth/me", { token: sameSecretRightAlg })).status).toBe(200);
  });

  test("a non-Bearer Authorization header is 401", async () => {
    const r = await t.request("GET", "/api/v1/auth/me", { headers: { authorization: "Basic Zm9vOmJhcg==" } });
    expect(r.status, r.text).toBe(401);
  });
});

describe("register and login refusals write nothing", () => {
  test("duplicate email, in any case: 409 EMAIL_TAKEN", async () => {
    const owner = await registerClinic(t);
    const [users, clinics] = [await countRows("users"), await countRows("clinics")];
    const r = await t.request<ErrorBody>("POST", "/api/v1/auth/register", {
      json: { email: owner.user.email.toUpperCase(), password: PASSWORD, name: "Copy", clinic_name: "Copy" },
    });
    expect(r.status, r.text).toBe(409);
    expect(r.body.code).toBe("EMAIL_TAKEN");
    expect([await countRows("users"), await countRows("clinics")]).toEqual([users, clinics]);
  });

  const valid = () => ({ email: uniqueEmail("v"), password: PASSWORD, name: "N", clinic_name: "C" });
  interface Case {
    label: string;
    send: { json?: unknown; body?: string };
    status: number;
    code: string;
    field?: string;
  }
  const v = valid;
  const cases: Case[] = [
    { label: "short password", send: { json: { ...v(), password: "short" } }, status: 422, code: "VALIDATION_FAILED", field: "body.password" },
    { label: "password over 256", send: { json: { ...v(), password: "x".repeat(257) } }, status: 422, code: "VALIDATION_FAILED", field: "body.password" },
    { label: "missing clinic_name", send: { json: { email: uniqueEmail(), password: PASSWORD, name: "N" } }, status: 422, code: "VALIDATION_FAILED", field: "body.clinic_name" },
    { label: "email of wrong type", send: { json: { ...v(), email: 42 } }, status: 422, code: "VALIDATION_FAILED", field: "body.email" },
    { label: "not an email", send: { json: { ...v(), email: "nope" } }, status: 422, code: "VALIDATION_FAILED", field: "body.email" },
    { label: "unknown time zone", send: { json: { ...v(), timezone: "Mars/Olympus" } }, status: 422, code: "VALIDATION_FAILED", field: "body.timezone" },
    { label: "bad currency", send: { json: { ...v(), currency: "pesos" } }, status: 422, code: "VALIDATION_FAILED", field: "body.currency" },
    { label: "malformed JSON", send: { body: '{"email": "a@b.cl",' }, status: 400, code: "INVALID_JSON" },
    { label: "an array body", send: { json: [v()] }, status: 422, code: "VALIDATION_FAILED" },
    { label: "a huge body", send: { json: { ...v(), name: "x".repeat(2 * 1024 * 1024) } }, status: 413, code: "PAYLOAD_TOO_LARGE" },
  ];
  for (const c of cases) {
    test(c.label, async () => {
      const [users, clinics] = [await countRows("users"), await countRows("clinics")];
      const r = await t.request<Refusal<ValidationDetails>>("POST", "/api/v1/auth/register", { ...c.send, headers: { "content-type": "application/json" } });
      expect(r.status, r.text).toBe(c.status);
      expect(r.body.code, r.text).toBe(c.code);
      expect(r.body.request_id, r.text).toBeString();
      if (c.field) expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(c.field);
      expect([await countRows("users"), await countRows("clinics")]).toEqual([users, clinics]);
    });
  }

  test("wrong password and unknown email give the same 401", async () => {
    const owner = await registerClinic(t);
    const tokens = await countRows("refresh_tokens");
    const wrong = await t.request<ErrorBody>("POST", "/api/v1/auth/login", { json: { email: owner.user.email, password: "wrong password!" } });
    const unknown = await t.request<ErrorBody>("POST", "/api/v1/auth/login", { json: { email: uniqueEmail("ghost"), password: PASSWORD } });
    for (const r of [wrong, unknown]) {
      expect(r.status, r.text).toBe(401);
      expect(r.body.code).toBe("INVALID_CREDENTIALS");
      expect(r.body.message).toBe("Invalid email or password");
    }
    expect(await countRows("refresh_tokens")).toBe(tokens);
  });

  test("passwords are stored as argon2id hashes", async () => {
    const owner = await registerClinic(t);
    const [row] = await t.database.query<{ password_hash: string }>("select password_hash from users where id = $1", [owner.user.id]);
    expect(row!.password_hash).toStartWith("$argon2id$");
  });
});
