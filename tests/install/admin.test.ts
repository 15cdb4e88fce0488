/**
 * Install administrators apart from clinic owners: every install-wide route answers 403 FORBIDDEN
 * to the owner of any clinic who is not one, and 2xx to an administrator; `admin grant|revoke`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setInstallAdmin } from "../../src/modules/users/service";
import { createTestApp, type ErrorBody, type TestApp } from "../helpers/app";
import { registerClinic, relogin, type ClinicSession } from "../helpers/clinic";

const backupDir = mkdtempSync(join(tmpdir(), "vet-admin-"));
let t: TestApp;
let admin: ClinicSession;
let otherOwner: ClinicSession;
beforeAll(async () => {
  t = await createTestApp({ config: { registration: "open", backup: { dir: backupDir, intervalMs: null, keep: 3 } } });
  admin = await registerClinic(t);
  otherOwner = await registerClinic(t, { clinic_name: "Self-registered clinic" });
}, 30_000);
afterAll(async () => {
  await t.close();
  rmSync(backupDir, { recursive: true, force: true });
}, 30_000);

/** Every install-wide route of the app, from its OpenAPI document: everything under /api/v1/admin. */
function installWideRoutes(): { method: string; path: string }[] {
  const paths = (t.context.apiDocument.json as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.entries(paths)
    .filter(([path]) => path.startsWith("/api/v1/admin/"))
    .flatMap(([path, operations]) => Object.keys(operations).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m)).map((m) => ({ method: m.toUpperCase(), path: path.replace("{id}", "00000000-0000-7000-8000-000000000000") })));
}
const bodyFor = (method: string) => (method === "POST" || method === "PUT" || method === "PATCH" ? {} : undefined);

describe("install-wide routes", () => {
  test("the first account is the install's administrator; the next clinic's owner is not", () => {
    expect(admin.user).toMatchObject({ is_admin: true });
    expect(otherOwner.user).toMatchObject({ role: "owner", is_admin: false });
  });

  test("another clinic's owner gets 403 FORBIDDEN on every one, and nothing is written", async () => {
    const routes = installWideRoutes();
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(["GET /api/v1/admin/backups", "POST /api/v1/admin/backups", "GET /api/v1/admin/install", "POST /api/v1/admin/invitations"]));
    for (const route of routes) {
      const r = await otherOwner.as<ErrorBody>(route.method, route.path, { json: bodyFor(route.method) });
      expect(r.status, `${route.method} ${route.path}: ${r.text}`).toBe(403);
      expect(r.body.code).toBe("FORBIDDEN");
    }
    expect(await t.count("invitations")).toBe(0);
    expect(t.context.backups?.store.list() ?? []).toEqual([]);
  });

  test("the administrator gets 2xx on every one (an unknown invitation: 404)", async () => {
    for (const route of installWideRoutes()) {
      const r = await admin.as(route.method, route.path, { json: bodyFor(route.method) });
      if (route.method === "DELETE") expect(r.status, r.text).toBe(404);
      // On PostgreSQL the server takes no backups of its own (its operator does), and says so.
      else if (route.method === "POST" && route.path.endsWith("/backups") && !t.context.backups) expect(r.status, r.text).toBe(409);
      else expect(r.status, `${route.method} ${route.path}: ${r.text}`).toBeLessThan(300);
    }
  });

  test("GET /admin/install shows the policy and the administrators", async () => {
    const r = await admin.as<{ registration: string; administrators: { email: string }[]; clinics: number }>("GET", "/api/v1/admin/install");
    expect(r.body.registration).toBe("open");
    expect(r.body.administrators.map((a) => a.email)).toEqual([admin.user.email]);
    expect(r.body.clinics).toBe(2);
  });
});

describe("admin grant and revoke", () => {
  test("grant opens the install-wide routes at once; revoke closes them; the last administrator stays", async () => {
    const ctx = { db: t.database.db, clock: t.clock };
    expect((await otherOwner.as("GET", "/api/v1/admin/install")).status).toBe(403);
    await setInstallAdmin(ctx, otherOwner.user.email.toUpperCase(), true);
    expect((await otherOwner.as("GET", "/api/v1/admin/install")).status).toBe(200);
    await setInstallAdmin(ctx, otherOwner.user.email, false);
    expect((await otherOwner.as("GET", "/api/v1/admin/install")).status).toBe(403);
    await expect(setInstallAdmin(ctx, admin.user.email, false)).rejects.toThrow(/only administrator/);
    await expect(setInstallAdmin(ctx, "nobody@clinic.test", true)).rejects.toThrow(/no user/);
    admin = await relogin(t, admin);
    expect((await admin.as("GET", "/api/v1/admin/install")).status).toBe(200);
  });
});
