import { expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/config";
import type { Refusal, TestApp } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
// Low public limits: three calls a minute per clinic, five per address.
useClinicApp((made) => ({ t, owner } = made), {
  config: { limits: { ...DEFAULT_LIMITS, authPerIpPerMinute: 10_000, perUserPerMinute: 100_000, publicPerIpPerMinute: 5, publicPerClinicPerMinute: 3 } },
});

test("the public routes are limited per clinic and per address: 429 in the envelope with Retry-After, and a minute later open again", async () => {
  const other = await registerClinic(t);
  expect((await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slug: "uno" } })).status).toBe(200);
  expect((await other.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slug: "dos" } })).status).toBe(200);
  const page = (slug: string) => t.request<Refusal<{ retry_after: number }>>("GET", `/api/v1/public/clinics/${slug}`);
  for (let i = 0; i < 3; i++) expect((await page("uno")).status).toBe(200);
  const perClinic = await page("uno");
  expect(perClinic.status, perClinic.text).toBe(429);
  expect(perClinic.body.code).toBe("RATE_LIMIT_EXCEEDED");
  expect(Number(perClinic.headers.get("retry-after"))).toBeGreaterThan(0);
  // Another clinic still answers, until the address has used its five calls.
  expect((await page("dos")).status).toBe(200);
  expect((await page("dos")).status).toBe(200);
  const perAddress = await page("dos");
  expect(perAddress.status, perAddress.text).toBe(429);
  // A forged manage link counts against the address too.
  expect((await t.request("GET", "/api/v1/public/bookings/manage", { headers: { "x-booking-token": "forged" } })).status).toBe(429);
  t.clock.advance(60_001);
  expect((await page("uno")).status).toBe(200);
  expect((await t.request("GET", "/api/v1/public/bookings/manage", { headers: { "x-booking-token": "forged" } })).status).toBe(401);
});
