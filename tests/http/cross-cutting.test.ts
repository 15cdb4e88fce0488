import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type ErrorBody, type TestApp } from "../helpers/app";
import { flushDeferred, PASSWORD, registerClinic } from "../helpers/clinic";
import { createLogger } from "../../src/lib/logger";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("request ids", () => {
  test("a client's X-Request-ID is echoed, in headers and error bodies", async () => {
    const r = await t.request<ErrorBody>("GET", "/api/v1/auth/me", { headers: { "x-request-id": "client-abc-123" } });
    expect(r.headers.get("x-request-id")).toBe("client-abc-123");
    expect(r.body.request_id, r.text).toBe("client-abc-123");
  });

  test("a missing or unsafe X-Request-ID is replaced by a generated one", async () => {
    for (const headers of [{}, { "x-request-id": "bad id with spaces\"<>" }] as Record<string, string>[]) {
      const r = await t.request("GET", "/health", { headers });
      expect(r.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe("error envelope", () => {
  test("unknown routes are 404 NOT_FOUND in the envelope", async () => {
    const r = await t.request("GET", "/api/v1/no-such-thing");
    expect(r.status, r.text).toBe(404);
    expect(r.body).toMatchObject({ error: "not_found", code: "NOT_FOUND" });
    expect(r.headers.get("content-type")).toContain("application/json");
  });

  test("a non-JSON content type is 415", async () => {
    const r = await t.request<ErrorBody>("POST", "/api/v1/auth/login", { body: "email=a", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(r.status, r.text).toBe(415);
    expect(r.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  test("an unexpected failure is 500 INTERNAL_ERROR without internals, logged with the request id", async () => {
    const broken = await createTestApp();
    const owner = await registerClinic(broken);
    // A schema the code does not expect (not an outage, which is a 503).
    await broken.database.query("alter table clinics rename to clinics_gone");
    const r = await owner.as("GET", "/api/v1/auth/me", { headers: { "x-request-id": "req-500" } });
    expect(r.status, r.text).toBe(500);
    expect(r.body).toEqual({ error: "internal_error", code: "INTERNAL_ERROR", message: "An unexpected error occurred", request_id: "req-500" });
    expect(r.text).not.toMatch(/select|stack|at \//i);
    const logged = broken.logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "unhandled error");
    expect(logged?.request_id).toBe("req-500");
    await broken.close();
  });
});

describe("logs", () => {
  test("one JSON line per request with method, path, status, ms, request id and clinic, and no secrets", async () => {
    const owner = await registerClinic(t);
    t.logLines.length = 0;
    await owner.as("GET", "/api/v1/tutors?q=secret-query", { headers: { "x-request-id": "log-1" } });
    await t.request("POST", "/api/v1/auth/login", { json: { email: owner.user.email, password: PASSWORD } });
    await flushDeferred();
    const lines = t.logLines.map((l) => JSON.parse(l));
    const me = lines.find((l) => l.request_id === "log-1");
    expect(me, t.logLines.join("\n")).toMatchObject({ msg: "request", method: "GET", path: "/api/v1/tutors", status: 200, clinic_id: owner.clinic.id });
    expect(typeof me.ms).toBe("number");
    const all = t.logLines.join("\n");
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain("secret-query");
    expect(all).not.toContain(owner.token);
    expect(all).not.toContain(owner.refreshCookie.split("=")[1]);
  });
});

describe("logs at LOG_LEVEL=warn", () => {
  test("no request lines, and request ids still travel in headers and error bodies", async () => {
    const lines: string[] = [];
    const quiet = await createTestApp({ logger: createLogger("warn", (line) => void lines.push(line)) });
    try {
      const ok = await quiet.request("GET", "/health", { headers: { "x-request-id": "quiet-1" } });
      expect(ok.headers.get("x-request-id"), ok.text).toBe("quiet-1");
      const refused = await quiet.request<ErrorBody>("GET", "/api/v1/auth/me", { headers: { "x-request-id": "quiet-2" } });
      expect(refused.status, refused.text).toBe(401);
      expect(refused.body.request_id, refused.text).toBe("quiet-2");
      await flushDeferred();
      expect(lines.filter((line) => JSON.parse(line).msg === "request"), lines.join("\n")).toEqual([]);
    } finally {
      await quiet.close();
    }
  });
});

describe("operations endpoints", () => {
  test("/health and /ready answer without auth", async () => {
    expect((await t.request("GET", "/health")).body).toEqual({ status: "ok" });
    expect((await t.request("GET", "/ready")).body).toMatchObject({ status: "ready", database: "ok", usage_log: { pending: expect.any(Number), dropped: 0 } });
  });

  test("/ready is 503 while draining", async () => {
    t.context.lifecycle.draining = true;
    const r = await t.request("GET", "/ready");
    t.context.lifecycle.draining = false;
    expect(r.status, r.text).toBe(503);
  });
});
