import { describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { ApiKeyView, ApiKeyWithSecretView, UsageRowView } from "../../src/modules/mcp-keys/model";
import type { ClinicContextResult } from "../../src/modules/mcp/tools/clinic-context";
import { createTestApp, type ErrorBody, type Refusal, type TestApp, type ValidationDetails } from "../helpers/app";
import { registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
import { createKey, invoke, storedQuota } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

const keyCount = async () => (await t.database.query<{ n: number }>("select count(*)::int as n from api_keys"))[0]!.n;

describe("key life cycle", () => {
  test("the value is shown once, hashed at rest, and never listed", async () => {
    const key = await createKey(owner, { name: "Claude Desktop", scopes: ["read", "query"] });
    expect(key.api_key).toMatch(/^svc_[A-Za-z0-9]{32}$/);
    expect(key.key_prefix).toBe(key.api_key.slice(0, 8));
    expect(key).toMatchObject({ rate_limit_per_day: 1000, burst_per_minute: 60, expires_at: null, revoked_at: null, last_used_at: null });
    const read = await owner.as("GET", `/api/v1/mcp/keys/${key.id}`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).not.toHaveProperty("api_key");
    const list = await owner.as<CursorPageBody<ApiKeyView>>("GET", "/api/v1/mcp/keys");
    expect(list.text).not.toContain(key.api_key);
    expect(list.body.data.map((k: { id: string }) => k.id)).toContain(key.id);
    const [stored] = await t.database.query<{ key_hash: string }>("select key_hash from api_keys where id = $1", [key.id]);
    expect(stored!.key_hash).toBe(new Bun.CryptoHasher("sha256").update(key.api_key).digest("hex"));
    expect(JSON.stringify(stored)).not.toContain(key.api_key);
  });

  test("rotation: the old value is 401 on the very next call; the new one works with the same counters", async () => {
    const key = await createKey(owner, { rate_limit_per_day: 10 });
    for (let i = 0; i < 3; i++) expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    const rotated = await owner.as<ApiKeyWithSecretView>("POST", `/api/v1/mcp/keys/${key.id}/rotate`);
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.id).toBe(key.id);
    expect(rotated.body.api_key).not.toBe(key.api_key);
    const old = await invoke<ErrorBody>(t, key.api_key, "get_clinic_context");
    expect(old.status, old.text).toBe(401);
    expect(old.body.code).toBe("INVALID_API_KEY");
    const fresh = await invoke(t, rotated.body.api_key, "get_clinic_context");
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.headers.get("x-ratelimit-remaining")).toBe("6");
  });

  test("a key read while its change notice arrives is not kept: the read may be the row from before the change", async () => {
    const key = await createKey(owner);
    const directory = t.context.mcp.keys;
    const authorization = `Bearer ${key.api_key}`;
    // The read starts, and the notice of a change to this key arrives before it ends.
    const reading = directory.authenticate(authorization);
    directory.evictLocal(key.id);
    expect((await reading).id).toBe(key.id);
    // The change itself (a rotation committed by another instance): the old value must be read again, and refused.
    await t.database.query("update api_keys set key_hash = $2 where id = $1", [key.id, "0".repeat(64)]);
    await expect(directory.authenticate(authorization)).rejects.toMatchObject({ code: "INVALID_API_KEY" });
  });

  test("revocation: 401 API_KEY_REVOKED at once", async () => {
    const key = await createKey(owner);
    expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    const revoked = await owner.as("DELETE", `/api/v1/mcp/keys/${key.id}`);
    expect(revoked.status, revoked.text).toBe(204);
    const r = await invoke<ErrorBody>(t, key.api_key, "get_clinic_context");
    expect(r.status, r.text).toBe(401);
    expect(r.body.code).toBe("API_KEY_REVOKED");
    expect(r.headers.get("www-authenticate")).toBe(
      'Bearer error="invalid_token", error_description="The API key has been revoked", resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp", scope="read query clinic_context"',
    );
    expect((await owner.as<ApiKeyView>("GET", `/api/v1/mcp/keys/${key.id}`)).body.revoked_at).toBeString();
    const rotate = await owner.as("POST", `/api/v1/mcp/keys/${key.id}/rotate`);
    expect(rotate.status, rotate.text).toBe(409);
  });

  test("expiry: 401 API_KEY_EXPIRED once the clock passes expires_at", async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 3600_000).toISOString();
    const key = await createKey(owner, { expires_at: expiresAt });
    expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    t.clock.advance(3600_000);
    const r = await invoke<ErrorBody>(t, key.api_key, "get_clinic_context");
    expect(r.status, r.text).toBe(401);
    expect(r.body.code).toBe("API_KEY_EXPIRED");
    owner = await relogin(t, owner);
  });

  test("last_used_at is written by the flush, at most about once a minute", async () => {
    const key = await createKey(owner);
    await invoke(t, key.api_key, "get_clinic_context");
    const read = async () => (await owner.as<ApiKeyView>("GET", `/api/v1/mcp/keys/${key.id}`)).body.last_used_at;
    expect(await read()).toBeNull();
    await t.context.mcp.flush();
    const first = await read();
    expect(first).toBe(new Date(t.clock.now()).toISOString().replace(".000Z", "Z"));
    t.clock.advance(10_000);
    await invoke(t, key.api_key, "get_clinic_context");
    await t.context.mcp.flush();
    expect(await read()).toBe(first);
    t.clock.advance(60_000);
    await invoke(t, key.api_key, "get_clinic_context");
    await t.context.mcp.flush();
    expect(await read()).not.toBe(first);
  });
});

describe("refusals", () => {
  test("malformed key values are refused without touching the database", async () => {
    const offline = await createTestApp();
    await offline.database.close();
    for (const value of ["svc_short", "sk_live_abcdefabcdefabcdefabcdefabcdefab", `svc_${"a".repeat(31)}!`, ""]) {
      const r = await offline.request<ErrorBody>("POST", "/mcp/tools/get_clinic_context/invoke", { headers: { authorization: `Bearer ${value}` }, json: {} });
      expect(r.status, r.text).toBe(401);
      expect(r.body.code, r.text).toBe("INVALID_API_KEY");
    }
    const none = await offline.request<ErrorBody>("POST", "/mcp/tools/get_clinic_context/invoke", { json: {} });
    expect(none.body.code, none.text).toBe("AUTH_REQUIRED");
    await offline.database.destroy().catch(() => {});
  });

  test("a well-formed unknown key is 401 INVALID_API_KEY", async () => {
    const r = await invoke<ErrorBody>(t, `svc_${"A".repeat(32)}`, "get_clinic_context");
    expect(r.status, r.text).toBe(401);
    expect(r.body.code).toBe("INVALID_API_KEY");
  });

  test("invalid key requests are 422 and create nothing", async () => {
    const before = await keyCount();
    const bodies: [Record<string, unknown>, string][] = [
      [{ name: "x", scopes: [] }, "body.scopes"],
      [{ name: "x", scopes: ["admin"] }, "body.scopes.0"],
      [{ name: "x", scopes: ["read"], rate_limit_per_day: 1.5 }, "body.rate_limit_per_day"],
      [{ name: "x", scopes: ["read"], rate_limit_per_day: "100" }, "body.rate_limit_per_day"],
      [{ name: "x", scopes: ["read"], rate_limit_per_day: 0 }, "body.rate_limit_per_day"],
      [{ name: "x", scopes: ["read"], rate_limit_per_day: 1_000_001 }, "body.rate_limit_per_day"],
      [{ name: "x", scopes: ["read"], expires_at: "2000-01-01T00:00:00Z" }, "body.expires_at"],
      [{ scopes: ["read"] }, "body.name"],
    ];
    for (const [json, field] of bodies) {
      const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/mcp/keys", { json });
      expect(r.status, `${JSON.stringify(json)} → ${r.text}`).toBe(422);
      expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(field);
    }
    expect(await keyCount()).toBe(before);
  });

  test("another clinic cannot see, rotate or revoke a key, nor use its figures", async () => {
    const key = await createKey(owner);
    const other = await registerClinic(t);
    for (const [method, path] of [["GET", `/api/v1/mcp/keys/${key.id}`], ["POST", `/api/v1/mcp/keys/${key.id}/rotate`], ["DELETE", `/api/v1/mcp/keys/${key.id}`]] as const) {
      const r = await other.as(method, path);
      expect(r.status, r.text).toBe(404);
    }
    expect((await other.as<CursorPageBody<ApiKeyView>>("GET", "/api/v1/mcp/keys")).body.data).toEqual([]);
    expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    const otherKey = await createKey(other);
    const figures = await invoke<ClinicContextResult>(t, otherKey.api_key, "get_clinic_context");
    expect(figures.body.clinic_id).toBe(other.clinic.id);
    expect(await storedQuota(t, key.id)).toBeGreaterThanOrEqual(0);
  });
});

describe("usage list", () => {
  test("filters by key, tool and outcome; an impossible date is 422, not a database error", async () => {
    const key = await createKey(owner, { scopes: ["read"] });
    await invoke(t, key.api_key, "describe_schema");
    await invoke(t, key.api_key, "get_clinic_context");
    const list = async (query: string) => {
      const r = await owner.as<CursorPageBody<UsageRowView>>("GET", `/api/v1/mcp/usage?api_key_id=${key.id}&${query}`);
      expect(r.status, r.text).toBe(200);
      return r.body.data.map((row: { tool: string; outcome: string }) => `${row.tool}:${row.outcome}`);
    };
    expect(await list("")).toEqual(["describe_schema:ok", "get_clinic_context:denied"]);
    expect(await list("outcome=denied")).toEqual(["get_clinic_context:denied"]);
    expect(await list("tool=describe_schema")).toEqual(["describe_schema:ok"]);
    const today = t.clock.now().toISOString().slice(0, 10);
    expect(await list(`date_from=${today}&date_to=${today}`)).toHaveLength(2);
    const bad = await owner.as("GET", "/api/v1/mcp/usage?date_from=2026-02-30");
    expect(bad.status, bad.text).toBe(422);
  });
});
