/** The first run: the one-time setup token creates the clinic, its owner and the first administrator, once. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { HOUR } from "../../src/lib/clock";
import type { SessionView } from "../../src/modules/auth/model";
import { createTestApp, type Answer, type TestApp } from "../helpers/app";
import { PASSWORD, refreshCookieOf, uniqueEmail } from "../helpers/clinic";

const form = () => ({ clinic_name: "Clínica Los Aromos", name: "Dra. Rojas", email: uniqueEmail("first"), password: PASSWORD });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { registration: "closed" } });
}, 30_000);
afterAll(() => t.close(), 30_000);

const setup = (body: unknown) => t.request<Answer<SessionView>>("POST", "/api/v1/auth/setup", { json: body });

describe("the setup link", () => {
  test("the sign-in page can tell that no account exists yet", async () => {
    const state = await t.request<{ needed: boolean; registration: string }>("GET", "/api/v1/auth/setup");
    expect(state.body).toEqual({ needed: true, registration: "closed" });
  });

  test("without the token, or with another, setup answers 403 and writes nothing", async () => {
    t.context.setup.issue();
    for (const token of ["x", "not-the-token-at-all-not-the-token-at-all-00"]) {
      const refused = await setup({ ...form(), token });
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.code).toBe("FORBIDDEN");
    }
    expect((await setup(form())).status).toBe(422);
    expect(await t.count("users")).toBe(0);
  });

  test("an hour after it was issued, the token opens nothing", async () => {
    const token = t.context.setup.issue();
    t.clock.advance(HOUR);
    expect((await setup({ ...form(), token })).status).toBe(403);
  });

  test("a refused field gives the token back; the form creates the clinic (America/Santiago), its owner and administrator, and signs in; the token is then spent", async () => {
    const token = t.context.setup.issue();
    const bad = await setup({ ...form(), token, timezone: "Mars/Olympus" });
    expect(bad.status, bad.text).toBe(422);
    const first = form();
    const created = await setup({ ...first, token });
    expect(created.status, created.text).toBe(201);
    expect(created.body.user).toMatchObject({ email: first.email, role: "owner", is_admin: true });
    expect(created.body.clinic).toMatchObject({ name: first.clinic_name, timezone: "America/Santiago", currency: "CLP" });
    expect(refreshCookieOf(created)).toContain("service_refresh=");
    const again = await setup({ ...form(), token });
    expect(again.status).toBe(403);
    expect(await t.count("users")).toBe(1);
    expect((await t.request<{ needed: boolean }>("GET", "/api/v1/auth/setup")).body.needed).toBe(false);
  });

  test("once a user exists, even a fresh token makes no second first account", async () => {
    const token = t.context.setup.issue();
    const refused = await setup({ ...form(), token });
    expect(refused.status, refused.text).toBe(403);
    expect(await t.count("users")).toBe(1);
  });

  test("and registration stays closed (403 REGISTRATION_CLOSED)", async () => {
    const refused = await t.request<Answer<object>>("POST", "/api/v1/auth/register", { json: { ...form(), clinic_name: "Second" } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("REGISTRATION_CLOSED");
  });
});
