import { expect } from "bun:test";
import type { SessionView } from "../../src/modules/auth/model";
import type { RequestOptions, TestApp, TestResponse } from "./app";

export interface ClinicSession {
  token: string;
  refreshCookie: string;
  user: { id: string; email: string; role: string; clinic_id: string };
  clinic: { id: string; name: string; timezone: string; currency: string; tax_rate_bps: number };
  /** A request as this user. */
  as<Body = unknown>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<Body>>;
}

let counter = 0;
export const uniqueEmail = (label = "user") => `${label}.${Date.now().toString(36)}${(counter++).toString(36)}@clinic.test`;
export const PASSWORD = "correct horse battery";

/** The `service_refresh=value` pair from a response's Set-Cookie header. */
export function refreshCookieOf(response: TestResponse): string {
  const header = response.headers.get("set-cookie") ?? "";
  const match = /service_refresh=([^;]*)/.exec(header);
  return match ? `service_refresh=${match[1]}` : "";
}

export function sessionFrom(t: TestApp, response: TestResponse<SessionView>): ClinicSession {
  const token = response.body.access_token;
  return {
    token,
    refreshCookie: refreshCookieOf(response),
    user: response.body.user,
    clinic: response.body.clinic,
    as: <Body = unknown>(method: string, path: string, options: RequestOptions = {}) => t.request<Body>(method, path, { token, ...options }),
  };
}

/** Registers a new clinic and returns its owner's session. */
export async function registerClinic(t: TestApp, extra: Record<string, unknown> = {}): Promise<ClinicSession> {
  const response = await t.request<SessionView>("POST", "/api/v1/auth/register", {
    json: { email: uniqueEmail("owner"), password: PASSWORD, name: "Owner", clinic_name: "Clínica Test", ...extra },
  });
  expect(response.status, response.text).toBe(201);
  return sessionFrom(t, response);
}

/** Adds a user with `role` to the owner's clinic and logs them in. */
export async function addMember(t: TestApp, owner: ClinicSession, role: "vet" | "staff"): Promise<ClinicSession> {
  const email = uniqueEmail(role);
  const created = await owner.as("POST", "/api/v1/users", { json: { email, name: `A ${role}`, role, password: PASSWORD } });
  expect(created.status, created.text).toBe(201);
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: { email, password: PASSWORD } });
  expect(login.status, login.text).toBe(200);
  return sessionFrom(t, login);
}

/** Lets onAfterResponse hooks (deferred by Elysia) run before assertions on logs. */
export const flushDeferred = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Logs the same user in again (after the clock has moved past their access token). */
export async function relogin(t: TestApp, session: ClinicSession): Promise<ClinicSession> {
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: { email: session.user.email, password: PASSWORD } });
  expect(login.status, login.text).toBe(200);
  return sessionFrom(t, login);
}
