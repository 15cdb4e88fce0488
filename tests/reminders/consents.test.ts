import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app";
import { addMember, registerClinic, type ClinicSession } from "../helpers/clinic";

let t: TestApp;
let owner: ClinicSession;
let tutorId: string;

beforeAll(async () => {
  t = await createTestApp();
  owner = await registerClinic(t);
  const tutor = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Ana Pérez", email: "ana@example.test" } });
  tutorId = tutor.body.id;
});
afterAll(() => t.close());

type Consents = { current: { channel: string; purpose: string; granted: boolean }[]; history: { granted: boolean; source: string; recorded_by: string | null }[] };
const standing = (body: Consents, channel: string, purpose: string) => body.current.find((c) => c.channel === channel && c.purpose === purpose)!.granted;

test("nothing is granted until recorded; the latest record per channel and purpose decides", async () => {
  const before = await owner.as<Consents>("GET", `/api/v1/tutors/${tutorId}/consents`);
  expect(before.status).toBe(200);
  expect(before.body.current).toHaveLength(4);
  expect(before.body.current.every((c) => !c.granted)).toBe(true);

  const staff = await addMember(t, owner, "staff");
  const granted = await staff.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "email", purpose: "reminders", granted: true, evidence: "Firmó la ficha en el mesón" } });
  expect(granted.status, granted.text).toBe(201);
  t.clock.advance(1000);
  await staff.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "whatsapp", purpose: "reminders", granted: true } });
  t.clock.advance(1000);
  await staff.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "whatsapp", purpose: "reminders", granted: false, evidence: "Llamó para pedir que no le escriban" } });

  const after = await owner.as<Consents>("GET", `/api/v1/tutors/${tutorId}/consents`);
  expect(standing(after.body, "email", "reminders")).toBe(true);
  expect(standing(after.body, "whatsapp", "reminders")).toBe(false);
  expect(standing(after.body, "email", "marketing")).toBe(false);
  expect(after.body.history.map((h) => h.granted)).toEqual([true, true, false]);
  expect(after.body.history.every((h) => h.source === "console" && h.recorded_by === staff.user.id)).toBe(true);
});

test("a withdrawal is the consent.withdrawn event", async () => {
  const events = await t.database.query<{ action: string }>("select action from events where entity_type = 'consent' order by seq");
  expect(events.map((e) => e.action)).toContain("consent.withdrawn");
});

test("refusals write nothing: unknown channel, a source the tutor alone uses, another clinic's tutor", async () => {
  const rows = await t.count("consent_records");
  const bad = await owner.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "sms", purpose: "reminders", granted: true } });
  expect(bad.status).toBe(422);
  const link = await owner.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "email", purpose: "reminders", granted: true, source: "link" } });
  expect(link.status).toBe(422);
  const other = await registerClinic(t);
  const foreign = await other.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "email", purpose: "reminders", granted: false } });
  expect(foreign.status).toBe(404);
  expect((await other.as("GET", `/api/v1/tutors/${tutorId}/consents`)).status).toBe(404);
  expect(await t.count("consent_records")).toBe(rows);
});
