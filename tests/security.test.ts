import { describe, expect, test } from "bun:test";
import type { ErrorBody, TestApp } from "./helpers/app";
import type { ClinicSession } from "./helpers/clinic";
import { PROTECTED_ROUTES, PUBLIC_ROUTES, type ProtectedRoute } from "./helpers/protected-routes";
import { useClinicApp } from "./helpers/fixture";

/** The shared security suite: every protected route, attacked without a token, from another clinic, and with the wrong role. */
let t: TestApp;
let owner: ClinicSession;
let staff: ClinicSession;
let intruder: ClinicSession;

useClinicApp((made) => ({ t, owner, staff, other: intruder } = made), { otherClinic: true, members: ["staff"] });

const label = (r: ProtectedRoute) => `${r.method} ${r.path}`;
const resolvePath = (r: ProtectedRoute, id: string | undefined, path = r.path) => `/api/v1${path.replace(":id", id ?? "00000000-0000-7000-8000-000000000000").replace(/:\w+Id\b/, "00000000-0000-7000-8000-000000000000")}${path === r.path ? (r.query ?? "") : ""}`;
const readBackPath = (r: ProtectedRoute, id: string) => resolvePath(r, id, r.readBack ?? r.path);

test("every /api/v1 route of the app is listed as protected or public", () => {
  const listed = new Set([...PROTECTED_ROUTES.map(label), ...PUBLIC_ROUTES]);
  const unlisted = t.app.routes
    .filter((r) => r.path.startsWith("/api/v1/"))
    .map((r) => `${r.method} ${r.path.slice("/api/v1".length).replace(/\/$/, "")}`)
    .filter((name) => !listed.has(name));
  expect(unlisted).toEqual([]);
});

describe.each(PROTECTED_ROUTES.map((r) => [label(r), r] as const))("%s", (_name, route) => {
  test("without a token: 401 AUTH_REQUIRED with WWW-Authenticate", async () => {
    const r = await t.request<ErrorBody>(route.method, resolvePath(route, undefined), { json: route.body?.(undefined) });
    expect(r.status, r.text).toBe(401);
    expect(r.body.code, r.text).toBe("AUTH_REQUIRED");
    expect(r.headers.get("www-authenticate")).toBe("Bearer");
  });

  test("with a forged token: 401 INVALID_TOKEN", async () => {
    const [header, payload] = owner.token.split(".");
    const forged = `${header}.${payload}.${"A".repeat(43)}`;
    const r = await t.request<ErrorBody>(route.method, resolvePath(route, undefined), { token: forged, json: route.body?.(undefined) });
    expect(r.status, r.text).toBe(401);
    expect(r.body.code, r.text).toBe("INVALID_TOKEN");
  });

  if (route.roles) {
    test("with a role that is not allowed: 403 FORBIDDEN", async () => {
      const id = route.seed ? await route.seed(t, owner) : undefined;
      const r = await staff.as<ErrorBody>(route.method, resolvePath(route, id), { json: route.body?.(id) });
      expect(r.status, r.text).toBe(403);
      expect(r.body.code, r.text).toBe("FORBIDDEN");
      if (id && route.method !== "GET") {
        const after = await owner.as("GET", readBackPath(route, id));
        expect(after.status, after.text).toBe(200);
      }
    });
  }

  if (route.seed) {
    test("another clinic's record: 404 NOT_FOUND and nothing changes", async () => {
      const id = await route.seed!(t, owner);
      const before = await owner.as("GET", readBackPath(route, id));
      expect(before.status, before.text).toBe(200);
      const r = await intruder.as<ErrorBody>(route.method, resolvePath(route, id), { json: route.body?.(id) });
      expect(r.status, r.text).toBe(404);
      expect(r.body.code, r.text).toBe("NOT_FOUND");
      expect(r.text).not.toContain(owner.clinic.id);
      const after = await owner.as("GET", readBackPath(route, id));
      expect(after.body, after.text).toEqual(before.body);
    });
  }
});
