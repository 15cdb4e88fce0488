import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig, registrationFrom } from "../../src/config";
import { createTestApp, type Answer, type TestApp } from "../helpers/app";
import { PASSWORD, uniqueEmail } from "../helpers/clinic";

const registration = () => ({ email: uniqueEmail("owner"), password: PASSWORD, name: "Owner", clinic_name: "Second clinic" });

describe("REGISTRATION", () => {
  test("is closed unless set, and refuses anything but closed, open or invite", () => {
    expect(loadConfig({ DATA_DIR: "/nonexistent", JWT_SECRET: "x".repeat(32) }).registration).toBe("closed");
    expect(registrationFrom("OPEN")).toBe("open");
    expect(registrationFrom("invite")).toBe("invite");
    expect(() => registrationFrom("yes")).toThrow(/REGISTRATION must be closed, open or invite/);
  });
});

describe("closed (the default)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { registration: "closed" } });
  }, 30_000);
  afterAll(() => t.close(), 30_000);

  test("POST /auth/register answers 403 REGISTRATION_CLOSED on an empty install and writes nothing", async () => {
    const refused = await t.request<Answer<object>>("POST", "/api/v1/auth/register", { json: registration() });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.code).toBe("REGISTRATION_CLOSED");
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect(await t.count("clinics")).toBe(0);
    expect(await t.count("users")).toBe(0);
  });
});

describe("open", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ config: { registration: "open" } });
  }, 30_000);
  afterAll(() => t.close(), 30_000);

  test("a second clinic registers (201)", async () => {
    expect((await t.request("POST", "/api/v1/auth/register", { json: registration() })).status).toBe(201);
    const second = await t.request("POST", "/api/v1/auth/register", { json: registration() });
    expect(second.status, second.text).toBe(201);
    expect(await t.count("clinics")).toBe(2);
  });
});
