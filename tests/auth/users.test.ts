import { describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { MeView } from "../../src/modules/auth/model";
import type { UserView } from "../../src/modules/users/model";
import type { ErrorBody, Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { addMember, PASSWORD, refreshCookieOf, registerClinic, uniqueEmail, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

const liveUsers = async (clinicId: string) =>
  (await t.database.query<{ n: number }>("select count(*)::int as n from users where clinic_id = $1 and deleted_at is null", [clinicId]))[0]!.n;

describe("owner-managed users", () => {
  test("add, read, list, rename and change the role of a vet", async () => {
    const email = uniqueEmail("Vet");
    const created = await owner.as<UserView>("POST", "/api/v1/users", { json: { email, name: "Dra. Soto", role: "vet", password: PASSWORD } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ email: email.toLowerCase(), role: "vet", clinic_id: owner.clinic.id });
    expect(created.body).not.toHaveProperty("password_hash");

    const read = await owner.as("GET", `/api/v1/users/${created.body.id}`);
    expect(read.body, read.text).toEqual(created.body);

    const list = await owner.as<CursorPageBody<UserView>>("GET", "/api/v1/users?limit=200");
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((u: { id: string }) => u.id)).toContain(created.body.id);
    expect(list.body).toMatchObject({ has_more: false, next_cursor: null });

    t.clock.advance(1000);
    const patched = await owner.as<UserView>("PATCH", `/api/v1/users/${created.body.id}`, { json: { name: "Dra. Soto M.", role: "staff" } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: "Dra. Soto M.", role: "staff" });
    expect(patched.body.updated_at).not.toBe(created.body.updated_at);
  });

  test("the list pages with a cursor", async () => {
    const clinic = await registerClinic(t);
    for (let i = 0; i < 4; i++) {
      t.clock.advance(10);
      await clinic.as("POST", "/api/v1/users", { json: { email: uniqueEmail("p"), name: `P${i}`, role: "staff", password: PASSWORD } });
    }
    const first = await clinic.as<CursorPageBody<UserView>>("GET", "/api/v1/users?limit=2");
    expect(first.body.has_more, first.text).toBe(true);
    const second = await clinic.as<CursorPageBody<UserView>>("GET", `/api/v1/users?limit=2&cursor=${first.body.next_cursor}`);
    const third = await clinic.as<CursorPageBody<UserView>>("GET", `/api/v1/users?limit=2&cursor=${second.body.next_cursor}`);
    const ids = [...first.body.data, ...second.body.data, ...third.body.data].map((u: { id: string }) => u.id);
    expect(new Set(ids).size).toBe(5);
    expect(third.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  test("a deleted user's access and refresh tokens stop working at once", async () => {
    const vet = await addMember(t, owner, "vet");
    expect((await vet.as("GET", "/api/v1/auth/me")).status).toBe(200);
    const before = await liveUsers(owner.clinic.id);
    const removed = await owner.as("DELETE", `/api/v1/users/${vet.user.id}`);
    expect(removed.status, removed.text).toBe(204);
    expect(await liveUsers(owner.clinic.id)).toBe(before - 1);
    const me = await vet.as<ErrorBody>("GET", "/api/v1/auth/me");
    expect(me.status, me.text).toBe(401);
    expect(me.body.code).toBe("INVALID_TOKEN");
    const refreshed = await t.request("POST", "/api/v1/auth/refresh", { headers: { cookie: vet.refreshCookie } });
    expect(refreshed.status, refreshed.text).toBe(401);
    const login = await t.request<ErrorBody>("POST", "/api/v1/auth/login", { json: { email: vet.user.email, password: PASSWORD } });
    expect(login.body.code, login.text).toBe("INVALID_CREDENTIALS");
    expect((await owner.as("GET", `/api/v1/users/${vet.user.id}`)).status).toBe(404);
  });

  test("a changed password ends the user's sessions", async () => {
    const staff = await addMember(t, owner, "staff");
    const r = await owner.as("PATCH", `/api/v1/users/${staff.user.id}`, { json: { password: "a brand new password" } });
    expect(r.status, r.text).toBe(200);
    expect((await t.request("POST", "/api/v1/auth/refresh", { headers: { cookie: staff.refreshCookie } })).status).toBe(401);
    const login = await t.request("POST", "/api/v1/auth/login", { json: { email: staff.user.email, password: "a brand new password" } });
    expect(login.status, login.text).toBe(200);
    expect(refreshCookieOf(login)).toStartWith("service_refresh=");
  });
});

describe("refusals", () => {
  test("staff and vets cannot manage users (403) and nothing is written", async () => {
    const staff = await addMember(t, owner, "staff");
    const before = await liveUsers(owner.clinic.id);
    const r = await staff.as<ErrorBody>("POST", "/api/v1/users", { json: { email: uniqueEmail(), name: "X", role: "vet", password: PASSWORD } });
    expect(r.status, r.text).toBe(403);
    expect(r.body.code).toBe("FORBIDDEN");
    expect(await liveUsers(owner.clinic.id)).toBe(before);
  });

  test("an email used anywhere is 409 EMAIL_TAKEN", async () => {
    const other = await registerClinic(t);
    const before = await liveUsers(owner.clinic.id);
    const r = await owner.as<ErrorBody>("POST", "/api/v1/users", { json: { email: other.user.email.toUpperCase(), name: "X", role: "vet", password: PASSWORD } });
    expect(r.status, r.text).toBe(409);
    expect(r.body.code).toBe("EMAIL_TAKEN");
    expect(await liveUsers(owner.clinic.id)).toBe(before);
  });

  test("the owner cannot delete or re-role themselves", async () => {
    const del = await owner.as("DELETE", `/api/v1/users/${owner.user.id}`);
    expect(del.status, del.text).toBe(409);
    const patch = await owner.as("PATCH", `/api/v1/users/${owner.user.id}`, { json: { role: "staff" } });
    expect(patch.status, patch.text).toBe(409);
    expect((await owner.as<MeView>("GET", "/api/v1/auth/me")).body.user.role).toBe("owner");
  });

  test("invalid bodies and ids are 422 with the field named", async () => {
    const before = await liveUsers(owner.clinic.id);
    const cases: [string, string, unknown, string][] = [
      ["POST", "/api/v1/users", { email: uniqueEmail(), name: "X", role: "owner", password: PASSWORD }, "body.role"],
      ["POST", "/api/v1/users", { email: uniqueEmail(), name: "", role: "vet", password: PASSWORD }, "body.name"],
      ["PATCH", `/api/v1/users/${owner.user.id}`, {}, "body"],
      ["GET", "/api/v1/users/not-a-uuid", undefined, "params.id"],
    ];
    for (const [method, path, json, field] of cases) {
      const r = await owner.as<Refusal<ValidationDetails>>(method, path, { json });
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(field);
    }
    expect(await liveUsers(owner.clinic.id)).toBe(before);
  });

  test("limit out of range is 422; a tampered cursor is 400 INVALID_CURSOR", async () => {
    expect((await owner.as("GET", "/api/v1/users?limit=0")).status).toBe(422);
    expect((await owner.as("GET", "/api/v1/users?limit=201")).status).toBe(422);
    const page = await owner.as<CursorPageBody<UserView>>("GET", "/api/v1/users?limit=1");
    const [payload, signature] = (page.body.next_cursor as string).split(".");
    const edited = Buffer.from(Buffer.from(payload!, "base64url").toString().replace(/"v":\[\d/, '"v":[9')).toString("base64url");
    for (const cursor of [`${edited}.${signature}`, "garbage", `${payload}.x`]) {
      const r = await owner.as<ErrorBody>("GET", `/api/v1/users?cursor=${cursor}`);
      expect(r.status, r.text).toBe(400);
      expect(r.body.code).toBe("INVALID_CURSOR");
    }
  });
});
