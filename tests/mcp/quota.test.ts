import { describe, expect, test } from "bun:test";
import type { ErrorBody, TestApp } from "../helpers/app";
import { relogin, type ClinicSession } from "../helpers/clinic";
import { createKey, invoke, storedQuota, usageRows } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

describe("daily quota", () => {
  test("limit 5: remaining 4,3,2,1,0, then 429 with reset_at at the next 00:00Z; midnight resets it", async () => {
    t.clock.set("2026-03-10T22:30:00Z");
    owner = await relogin(t, owner);
    const key = await createKey(owner, { rate_limit_per_day: 5 });
    for (const remaining of [4, 3, 2, 1, 0]) {
      const r = await invoke(t, key.api_key, "get_clinic_context");
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(remaining));
      expect(r.headers.get("x-ratelimit-limit")).toBe("5");
      expect(r.headers.get("x-ratelimit-reset")).toBe(String(Date.parse("2026-03-11T00:00:00Z") / 1000));
    }
    const refused = await invoke(t, key.api_key, "get_clinic_context");
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body).toMatchObject({ error: "rate_limit_exceeded", code: "RATE_LIMIT_EXCEEDED", details: { limit: 5, reset_at: "2026-03-11T00:00:00Z" } });
    expect(Number(refused.headers.get("retry-after"))).toBe(90 * 60);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    await t.context.mcp.flush();
    expect(await storedQuota(t, key.id)).toBe(5);

    t.clock.set("2026-03-11T00:00:01Z");
    const nextDay = await invoke(t, key.api_key, "get_clinic_context");
    expect(nextDay.status, nextDay.text).toBe(200);
    expect(nextDay.headers.get("x-ratelimit-remaining")).toBe("4");
    await t.context.mcp.flush();
    expect(await storedQuota(t, key.id, "2026-03-10")).toBe(5);
    expect(await storedQuota(t, key.id, "2026-03-11")).toBe(1);
    owner = await relogin(t, owner);
  });

  test("unknown tool, missing scope and bad body each count; 429s do not", async () => {
    const key = await createKey(owner, { rate_limit_per_day: 4, scopes: ["read"] });
    const unknown = await invoke<ErrorBody>(t, key.api_key, "drop_everything");
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.body.code).toBe("TOOL_NOT_FOUND");
    expect(unknown.headers.get("x-ratelimit-remaining")).toBe("3");
    const scope = await invoke<ErrorBody>(t, key.api_key, "get_clinic_context");
    expect(scope.status, scope.text).toBe(403);
    expect(scope.body.code).toBe("INSUFFICIENT_SCOPE");
    expect(scope.headers.get("x-ratelimit-remaining")).toBe("2");

    const wide = await createKey(owner, { rate_limit_per_day: 2, scopes: ["clinic_context"] });
    const bad = await invoke<ErrorBody>(t, wide.api_key, "get_clinic_context", { surprise: true });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.body.code).toBe("VALIDATION_FAILED");
    expect(bad.headers.get("x-ratelimit-remaining")).toBe("1");
    const array = await invoke(t, wide.api_key, "get_clinic_context", [1, 2]);
    expect(array.status, array.text).toBe(422);
    expect(array.headers.get("x-ratelimit-remaining")).toBe("0");
    for (let i = 0; i < 3; i++) expect((await invoke(t, wide.api_key, "get_clinic_context")).status).toBe(429);
    await t.context.mcp.flush();
    expect(await storedQuota(t, wide.id)).toBe(2);

    const rows = await usageRows(t, wide.id);
    expect(rows.map((r) => `${r.status_code}:${r.outcome}`)).toEqual(["422:error", "422:error", "429:rate_limited", "429:rate_limited", "429:rate_limited"]);
    const denied = await usageRows(t, key.id);
    expect(denied.map((r) => `${r.tool}:${r.status_code}:${r.outcome}`)).toEqual(["drop_everything:404:denied", "get_clinic_context:403:denied"]);
  });

  test("GET /mcp/tools and /mcp/health do not count", async () => {
    const key = await createKey(owner, { rate_limit_per_day: 3 });
    for (let i = 0; i < 5; i++) {
      expect((await t.request("GET", "/mcp/tools", { token: key.api_key })).status).toBe(200);
      expect((await t.request("GET", "/mcp/health")).body).toEqual({ status: "ok", database: "ok" });
    }
    const r = await invoke(t, key.api_key, "get_clinic_context");
    expect(r.headers.get("x-ratelimit-remaining")).toBe("2");
  });
});

describe("burst cap", () => {
  test("burst_per_minute + 20 concurrent calls: exactly burst_per_minute admitted and counted", async () => {
    const key = await createKey(owner, { rate_limit_per_day: 1000 });
    expect(key.burst_per_minute).toBe(60);
    const results = await Promise.all(Array.from({ length: 80 }, () => invoke(t, key.api_key, "get_clinic_context")));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBe(60);
    expect(statuses.filter((s) => s === 429).length).toBe(20);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body).toMatchObject({ error: "burst_limit_exceeded", code: "BURST_LIMIT_EXCEEDED", retry_after: 60, details: { limit_per_minute: 60, retry_after: 60 } });
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("940");
    await t.context.mcp.flush();
    expect(await storedQuota(t, key.id)).toBe(60);
  });

  test("the window slides with the clock", async () => {
    const key = await createKey(owner);
    for (let i = 0; i < 30; i++) expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    t.clock.advance(30_000);
    for (let i = 0; i < 30; i++) expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    const full = await invoke<ErrorBody & { retry_after: number }>(t, key.api_key, "get_clinic_context");
    expect(full.status, full.text).toBe(429);
    expect(full.body.retry_after).toBe(30);
    t.clock.advance(30_000);
    // The first 30 have left the rolling minute; the second 30 have not.
    for (let i = 0; i < 30; i++) expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(429);
  });

  test("the plan sets the cap: pro 200, enterprise per clinic", async () => {
    await t.database.query("update clinics set plan = 'pro' where id = $1", [owner.clinic.id]);
    expect((await createKey(owner)).burst_per_minute).toBe(200);
    await t.database.query("update clinics set plan = 'enterprise', burst_per_minute = 1234 where id = $1", [owner.clinic.id]);
    expect((await createKey(owner)).burst_per_minute).toBe(1234);
    await t.database.query("update clinics set plan = 'standard', burst_per_minute = null where id = $1", [owner.clinic.id]);
  });
});
