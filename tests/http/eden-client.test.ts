/** The typed client for TypeScript apps: Eden Treaty over the app's exported type. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { treaty } from "@elysiajs/eden";
import type { App } from "../../src/app";
import { createTestApp, type TestApp } from "../helpers/app";
import { PASSWORD, uniqueEmail } from "../helpers/clinic";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("login → create a tutor → list tutors, fully typed", async () => {
  const anonymous = treaty<App>(t.app);
  const email = uniqueEmail("eden");
  const registered = await anonymous.api.v1.auth.register.post({ email, password: PASSWORD, name: "Ana", clinic_name: "Eden Clinic", timezone: "America/Santiago" });
  expect(registered.status).toBe(201);
  const login = await anonymous.api.v1.auth.login.post({ email, password: PASSWORD });
  if (login.error) throw new Error(`login failed: ${JSON.stringify(login.error.value)}`);
  const token: string = login.data.access_token;

  const api = treaty<App>(t.app, { headers: { authorization: `Bearer ${token}` } });
  const created = await api.api.v1.tutors.post({ name: "Camila Rojas", phone: "+56912345678" });
  if (created.error) throw new Error(`create failed: ${JSON.stringify(created.error.value)}`);
  expect(created.data.name).toBe("Camila Rojas");

  const listed = await api.api.v1.tutors.get({ query: { q: "Camila" } });
  if (listed.error) throw new Error(`list failed: ${JSON.stringify(listed.error.value)}`);
  expect(listed.data.data.map((tutor) => tutor.id)).toContain(created.data.id);

  const refused = await api.api.v1.tutors.post({ name: "" });
  expect(refused.status).toBe(422);
});
