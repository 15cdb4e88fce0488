/** REGISTRATION=invite: an administrator's invitation registers one clinic, once. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY } from "../../src/lib/clock";
import { createTestApp, type Answer, type TestApp } from "../helpers/app";
import { PASSWORD, relogin, uniqueEmail, type ClinicSession, sessionFrom } from "../helpers/clinic";
import type { SessionView } from "../../src/modules/auth/model";

let t: TestApp;
let admin: ClinicSession;
beforeAll(async () => {
  t = await createTestApp({ config: { registration: "invite" } });
  const token = t.context.setup.issue();
  const created = await t.request<SessionView>("POST", "/api/v1/auth/setup", { json: { token, clinic_name: "First", name: "Admin", email: uniqueEmail("admin"), password: PASSWORD } });
  admin = sessionFrom(t, created);
}, 30_000);
afterAll(() => t.close(), 30_000);

const register = (invitation?: string) =>
  t.request<Answer<SessionView>>("POST", "/api/v1/auth/register", { json: { email: uniqueEmail("invited"), password: PASSWORD, name: "Invited", clinic_name: "Invited clinic", ...(invitation === undefined ? {} : { invitation }) } });
const invite = async () => {
  const r = await admin.as<{ id: string; token: string; url: string; expires_at: string }>("POST", "/api/v1/admin/invitations", { json: { note: "Clínica Sur" } });
  expect(r.status, r.text).toBe(201);
  return r.body;
};

describe("invitations", () => {
  test("without an invitation, or with an unknown one, registration answers 403 REGISTRATION_CLOSED", async () => {
    for (const invitation of [undefined, "made-up-token"]) {
      const r = await register(invitation);
      expect(r.status, r.text).toBe(403);
      expect(r.body.code).toBe("REGISTRATION_CLOSED");
    }
    expect(await t.count("clinics")).toBe(1);
  });

  test("an invitation is a link valid 7 days that registers once and never twice", async () => {
    const invitation = await invite();
    expect(invitation.url).toBe(`http://localhost/join#${invitation.token}`);
    expect(Date.parse(invitation.expires_at) - t.clock.now().getTime()).toBe(7 * DAY);
    const first = await register(invitation.token);
    expect(first.status, first.text).toBe(201);
    expect(first.body.user).toMatchObject({ role: "owner", is_admin: false });
    const second = await register(invitation.token);
    expect(second.status, second.text).toBe(403);
    expect(await t.count("clinics")).toBe(2);
    const listed = await admin.as<{ id: string; used_by: string | null }[]>("GET", "/api/v1/admin/invitations");
    expect(listed.body.find((i) => i.id === invitation.id)?.used_by).toBe(first.body.user.id);
  });

  test("two registrations racing with one invitation: exactly one wins", async () => {
    const invitation = await invite();
    const results = await Promise.all([register(invitation.token), register(invitation.token)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 403]);
  });

  test("an expired or revoked invitation registers nothing", async () => {
    const expiring = await invite();
    const revoked = await invite();
    expect((await admin.as("DELETE", `/api/v1/admin/invitations/${revoked.id}`)).status).toBe(204);
    expect((await register(revoked.token)).status).toBe(403);
    t.clock.advance(7 * DAY);
    expect((await register(expiring.token)).status).toBe(403);
    admin = await relogin(t, admin);
  });
});
