import { expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/config";
import type { Refusal, TestApp, ValidationDetails } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
// The clock stands at 2026-01-15T12:00Z, a Thursday; Santiago is at -03:00 in January, and the
// vet works the clinic's opening hours (Monday–Friday 09:00–19:00 local = 12:00–22:00Z).
useClinicApp((made) => ({ t, owner, vet } = made), {
  members: ["vet"],
  clinic: { timezone: "America/Santiago" },
  config: { limits: { ...DEFAULT_LIMITS, authPerIpPerMinute: 10_000, perUserPerMinute: 100_000, publicPerIpPerMinute: 10_000, publicPerClinicPerMinute: 10_000 } },
});

interface Answer {
  booking: { id: string; status: string; start: string; end: string; appointment_type: { id: string; name: string }; vet: { id: string; name: string } | null; patient_name: string; changeable_until: string; can_change: boolean };
  manage_token: string;
  manage_url: string;
  manage_expires_at: string;
}
const SLUG = "los-aromos";
const created = async (path: string, json: Record<string, unknown>) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1/${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
const settings = (json: Record<string, unknown>) => owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json });
const bookingBody = (typeId: string, start: string, extra: Record<string, unknown> = {}) => ({
  appointment_type_id: typeId,
  start,
  tutor: { name: "Carla Muñoz", phone: "+56987654321", email: "carla@example.cl" },
  patient: { name: "Toby", species: "dog" },
  consents: { email_reminders: true, whatsapp_reminders: false },
  ...extra,
});
const book = (body: unknown, key: string = crypto.randomUUID()) => t.request<Answer>("POST", `/api/v1/public/clinics/${SLUG}/bookings`, { json: body, headers: { "idempotency-key": key } });
const manage = <Body = Answer>(token: string, json?: unknown) => t.request<Body>(json ? "POST" : "GET", "/api/v1/public/bookings/manage", { json, headers: { "x-booking-token": token } });

let consulta: string;
let surgery: string;

test("a clinic without a slug is not found; with one, its page lists only the types taken online, without vets unless it shows them", async () => {
  expect((await t.request("GET", `/api/v1/public/clinics/${SLUG}`)).status).toBe(404);
  expect((await settings({ slug: SLUG })).status).toBe(200);
  consulta = await created("appointment-types", { name: "Consulta", duration_minutes: 30, vet_ids: [vet.user.id], species: ["dog", "cat"], bookable_online: true, min_notice_minutes: 120, max_advance_days: 30 });
  surgery = await created("appointment-types", { name: "Cirugía", duration_minutes: 60, vet_ids: [vet.user.id] });
  const page = await t.request<{ name: string; phone: string | null; appointment_types: { id: string }[]; vets: unknown; consents: { channel: string; text: string }[]; cancellation_window_minutes: number }>("GET", `/api/v1/public/clinics/${SLUG.toUpperCase()}`);
  expect(page.status, page.text).toBe(200);
  expect(page.body.name).toBe("Clínica Test");
  expect(page.body.appointment_types.map((type) => type.id)).toEqual([consulta]);
  expect(page.body.vets).toBeNull();
  expect(page.body.cancellation_window_minutes).toBe(1440);
  expect(page.body.phone).toBeNull();
  const phoned = await owner.as("PATCH", "/api/v1/clinic", { json: { phone: "+56 2 2345 6789" } });
  expect(phoned.status, phoned.text).toBe(200);
  expect((await t.request<{ phone: string | null }>("GET", `/api/v1/public/clinics/${SLUG}`)).body.phone).toBe("+56 2 2345 6789");
  expect((await owner.as("PATCH", "/api/v1/clinic", { json: { phone: "call us" } })).status).toBe(422);
  expect(page.body.consents.map((c) => c.channel)).toEqual(["email", "whatsapp"]);
  expect(page.body.consents[0]!.text).toContain("correo electrónico");
  expect(page.headers.get("x-ratelimit-limit")).toBe("10000");

  // Public availability: the staff computation, one slot per start, no vet.
  const staff = await owner.as<{ data: { start: string }[] }>("GET", `/api/v1/availability?appointment_type_id=${consulta}&from=2026-01-19&to=2026-01-19`);
  const open = await t.request<{ data: { start: string; vet_id: string | null }[] }>("GET", `/api/v1/public/clinics/${SLUG}/availability?appointment_type_id=${consulta}&from=2026-01-19&to=2026-01-19`);
  expect(open.status, open.text).toBe(200);
  expect(open.body.data.map((s) => s.start)).toEqual(staff.body.data.map((s) => s.start));
  expect(open.body.data.every((s) => s.vet_id === null)).toBe(true);
  const choosing = await t.request<Refusal<ValidationDetails>>("GET", `/api/v1/public/clinics/${SLUG}/availability?appointment_type_id=${consulta}&from=2026-01-19&to=2026-01-19&vet_id=${vet.user.id}`);
  expect(choosing.status).toBe(422);
  const notOnline = await t.request("GET", `/api/v1/public/clinics/${SLUG}/availability?appointment_type_id=${surgery}&from=2026-01-19&to=2026-01-19`);
  expect(notOnline.status).toBe(422);

  expect((await settings({ show_vet_names_online: true })).status).toBe(200);
  const shown = await t.request<{ vets: { id: string; name: string }[] }>("GET", `/api/v1/public/clinics/${SLUG}`);
  expect(shown.body.vets).toEqual([{ id: vet.user.id, name: "A vet" }]);
  const withVets = await t.request<{ data: { vet_id: string }[] }>("GET", `/api/v1/public/clinics/${SLUG}/availability?appointment_type_id=${consulta}&from=2026-01-19&to=2026-01-19&vet_id=${vet.user.id}`);
  expect(withVets.body.data.every((s) => s.vet_id === vet.user.id)).toBe(true);
  expect((await settings({ show_vet_names_online: false })).status).toBe(200);
});

test("a booking refuses what the type does not take, with a 4xx in the envelope and nothing written", async () => {
  const tables = ["visits", "tutors", "patients", "consent_records", "idempotency_keys"];
  const counts = async () => Promise.all(tables.map((table) => t.count(table)));
  const before = await counts();
  const noKey = await t.request<Refusal<unknown>>("POST", `/api/v1/public/clinics/${SLUG}/bookings`, { json: bookingBody(consulta, "2026-01-19T13:00:00Z") });
  expect(noKey.status, noKey.text).toBe(400);
  expect(noKey.body.code).toBe("INVALID_IDEMPOTENCY_KEY");
  const refusals: [unknown, number, string][] = [
    [bookingBody(surgery, "2026-01-19T13:00:00Z"), 422, "body.appointment_type_id"],
    [bookingBody(consulta, "2026-01-19T13:00:00Z", { patient: { name: "Piolín", species: "bird" } }), 422, "body.patient.species"],
    [bookingBody(consulta, "2026-01-15T13:00:00Z"), 422, "body.start"], // an hour from now; notice is two
    [bookingBody(consulta, "2026-02-16T13:00:00Z"), 422, "body.start"], // past 30 days
    [bookingBody(consulta, "2026-01-19T02:00:00Z"), 422, "body.start"], // 23:00 local, outside hours
    [bookingBody(consulta, "2026-01-19T13:10:00Z"), 422, "body.start"], // not on the slot grid
    [bookingBody(consulta, "2026-01-19T13:00:00Z", { vet_id: vet.user.id }), 422, "body.vet_id"], // the clinic hides its vets
    [bookingBody(consulta, "2026-01-19T13:00:00Z", { tutor: { name: "X", phone: "+56987654321", email: "x@example.cl", rut: "12.345.678-9" } }), 422, "body.tutor.rut"],
  ];
  for (const [body, status, path] of refusals) {
    const r = await book(body);
    expect(r.status, r.text).toBe(status);
    const refusal = r.body as unknown as Refusal<ValidationDetails>;
    expect(refusal.details.fields.map((f) => f.path), r.text).toContain(path);
  }
  expect((await t.request("POST", "/api/v1/public/clinics/nobody/bookings", { json: bookingBody(consulta, "2026-01-19T13:00:00Z"), headers: { "idempotency-key": crypto.randomUUID() } })).status).toBe(404);
  expect(await counts()).toEqual(before);
});

test("a booking is requested, carries a manage link, and answers alike whether or not the tutor was known", async () => {
  const newTutor = await book(bookingBody(consulta, "2026-01-19T13:00:00Z"));
  expect(newTutor.status, newTutor.text).toBe(201);
  expect(newTutor.body.booking.status).toBe("requested");
  expect(newTutor.body.booking.vet).toBeNull();
  expect(newTutor.body.manage_url).toBe(`http://localhost/book/${SLUG}/manage#${newTutor.body.manage_token}`);
  const visit = await owner.as<{ status: string; vet_id: string; appointment_type_id: string; ends_at: string; patient_id: string }>("GET", `/api/v1/visits/${newTutor.body.booking.id}`);
  expect(visit.body).toMatchObject({ status: "requested", vet_id: vet.user.id, appointment_type_id: consulta, ends_at: "2026-01-19T13:30:00Z" });

  // The tutor was created from the form, with the ticked consent and the form's wording as evidence.
  const [tutor] = await t.database.query<{ id: string; name: string; phone: string; email: string }>("select t.id, t.name, t.phone, t.email from tutors t join patients p on p.tutor_id = t.id where p.id = $1", [visit.body.patient_id]);
  expect(tutor).toMatchObject({ name: "Carla Muñoz", phone: "+56987654321", email: "carla@example.cl" });
  const consents = await owner.as<{ history: { channel: string; granted: boolean; source: string; evidence: string }[] }>("GET", `/api/v1/tutors/${tutor!.id}/consents`);
  expect(consents.body.history).toHaveLength(1);
  expect(consents.body.history[0]).toMatchObject({ channel: "email", granted: true, source: "booking" });
  expect(consents.body.history[0]!.evidence).toContain("Acepto que la clínica me envíe recordatorios");

  // The same phone written otherwise, another e-mail: the known tutor and their pet, nothing new;
  // the e-mail tick names an address not on file, so it is not recorded for them.
  const tutorsBefore = await t.count("tutors");
  const patientsBefore = await t.count("patients");
  const known = await book(bookingBody(consulta, "2026-01-19T14:00:00Z", { tutor: { name: "Someone", phone: "+56 9 8765 4321".replaceAll(" ", ""), email: "other@example.cl" }, patient: { name: "TOBY", species: "dog" } }));
  expect(known.status, known.text).toBe(201);
  expect(await t.count("tutors")).toBe(tutorsBefore);
  expect(await t.count("patients")).toBe(patientsBefore);
  expect((await owner.as<{ history: unknown[] }>("GET", `/api/v1/tutors/${tutor!.id}/consents`)).body.history).toHaveLength(1);
  const shape = (a: Answer) => JSON.stringify(a, (key, value) => (["id", "start", "end", "changeable_until", "manage_token", "manage_url", "manage_expires_at", "patient_name"].includes(key) ? typeof value : value));
  expect(shape(known.body)).toBe(shape(newTutor.body));
  expect(known.headers.get("content-length") === null || Math.abs(known.text.length - newTutor.text.length) < 8).toBe(true);

  // A retry with the same key replays the first answer; the key with another body is refused.
  const key = crypto.randomUUID();
  const first = await book(bookingBody(consulta, "2026-01-19T15:00:00Z", { tutor: { name: "Ana", phone: "+56911110000", email: "ana@example.cl" } }), key);
  const retry = await book(bookingBody(consulta, "2026-01-19T15:00:00Z", { tutor: { name: "Ana", phone: "+56911110000", email: "ana@example.cl" } }), key);
  expect(first.status).toBe(201);
  expect(retry.status).toBe(200);
  expect(retry.headers.get("idempotent-replayed")).toBe("true");
  expect(retry.body.booking.id).toBe(first.body.booking.id);

  // A taken slot is 409 SLOT_TAKEN as staff get it, with the visit in the way.
  const taken = await book(bookingBody(consulta, "2026-01-19T13:00:00Z", { tutor: { name: "Luis", phone: "+56922223333", email: "luis@example.cl" } }));
  expect(taken.status, taken.text).toBe(409);
  const refusal = taken.body as unknown as Refusal<{ conflicting_visit_id: string; alternatives: { start: string }[] }>;
  expect(refusal.code).toBe("SLOT_TAKEN");
  expect(refusal.details.conflicting_visit_id).toBe(newTutor.body.booking.id);
  expect(refusal.details.alternatives.length).toBeGreaterThan(0);

  // A clinic that confirms online bookings itself gets them scheduled.
  expect((await settings({ auto_confirm_online_bookings: true })).status).toBe(200);
  const confirmed = await book(bookingBody(consulta, "2026-01-19T16:00:00Z", { tutor: { name: "Eva", phone: "+56944445555", email: "eva@example.cl" } }));
  expect(confirmed.body.booking.status).toBe("scheduled");
  expect((await settings({ auto_confirm_online_bookings: false })).status).toBe(200);

  // A clinic that shows its vets lets the tutor choose one, and names them in the answer.
  expect((await settings({ show_vet_names_online: true })).status).toBe(200);
  const chosen = await book(bookingBody(consulta, "2026-01-19T17:00:00Z", { vet_id: vet.user.id, tutor: { name: "Iván", phone: "+56966667777", email: "ivan@example.cl" } }));
  expect(chosen.status, chosen.text).toBe(201);
  expect(chosen.body.booking.vet).toEqual({ id: vet.user.id, name: "A vet" });
  expect((await settings({ show_vet_names_online: false })).status).toBe(200);
});

test("the manage link shows, moves and cancels the booking within the cancellation window; audited, revision bumped", async () => {
  const made = await book(bookingBody(consulta, "2026-01-20T13:00:00Z", { tutor: { name: "Rosa", phone: "+56955556666", email: "rosa@example.cl" } }));
  expect(made.status, made.text).toBe(201);
  const token = made.body.manage_token;
  const revisionOf = async () => (await owner.as<{ revision: number }>("GET", `/api/v1/visits/${made.body.booking.id}`)).body.revision;
  const revision = await revisionOf();
  const seen = await manage(token);
  expect(seen.status, seen.text).toBe(200);
  expect(seen.body.booking).toEqual(made.body.booking);
  expect(seen.body.manage_token).toBe(token);

  for (const bad of ["", "x", `${made.body.booking.id}.9999999999.forged`, token.slice(0, -2) + "AA"]) {
    const r = await manage<Refusal<unknown>>(bad);
    expect(r.status, `${bad} → ${r.text}`).toBe(401);
  }

  // A move to a time another visit holds is 409; to a free one it moves, keeps its length, and gets a new link.
  const patient = await seedPatient(t, owner);
  expect((await owner.as("POST", "/api/v1/visits", { json: { patient_id: patient, vet_id: vet.user.id, scheduled_at: "2026-01-20T15:00:00Z" } })).status).toBe(201);
  expect((await manage<Refusal<unknown>>(token, { action: "move", start: "2026-01-20T15:00:00Z" })).body.code).toBe("SLOT_TAKEN");
  expect((await manage(token, { action: "move" })).status).toBe(422);
  const moved = await manage(token, { action: "move", start: "2026-01-20T16:00:00Z" });
  expect(moved.status, moved.text).toBe(200);
  expect(moved.body.booking).toMatchObject({ id: made.body.booking.id, start: "2026-01-20T16:00:00Z", end: "2026-01-20T16:30:00Z", status: "requested" });
  expect(moved.body.manage_token).not.toBe(token);
  const visit = await owner.as<{ revision: number; scheduled_at: string }>("GET", `/api/v1/visits/${made.body.booking.id}`);
  expect(visit.body.scheduled_at).toBe("2026-01-20T16:00:00Z");
  expect(visit.body.revision).toBe(revision + 1);

  // Past the window (a day before the start by default) neither move nor cancel is taken.
  t.clock.set("2026-01-19T16:30:00Z");
  const late = await manage<Refusal<unknown>>(moved.body.manage_token, { action: "cancel" });
  expect(late.status, late.text).toBe(409);
  expect(late.body.code).toBe("INVALID_STATE_TRANSITION");
  t.clock.set("2026-01-15T12:00:00Z");

  const cancelled = await manage(moved.body.manage_token, { action: "cancel" });
  expect(cancelled.status, cancelled.text).toBe(200);
  expect(cancelled.body.booking).toMatchObject({ status: "cancelled", can_change: false });
  expect(await revisionOf()).toBe(revision + 2);
  expect((await manage(moved.body.manage_token, { action: "cancel" })).status).toBe(200);
  expect((await manage(moved.body.manage_token, { action: "move", start: "2026-01-20T17:00:00Z" })).status).toBe(409);
  const events = await t.database.query<{ actor_name: string; actor_type: string }>("select actor_name, actor_type from events where entity_type = 'visit' and entity_id = $1 order by seq", [made.body.booking.id]);
  expect(events.map((e) => e.actor_name)).toEqual(["tutor (online booking)", "tutor (booking link)", "tutor (booking link)"]);
  expect(events.every((e) => e.actor_type === "system")).toBe(true);

  // The link expires a day after the visit's start.
  t.clock.set("2026-01-21T16:00:01Z");
  expect((await manage<Refusal<unknown>>(moved.body.manage_token)).body.code).toBe("TOKEN_EXPIRED");
  t.clock.set("2026-01-15T12:00:00Z");
});
