import { expect, test } from "bun:test";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
// The clock stands at 2026-01-15T12:00Z, a Thursday; Santiago is at -03:00 in January.
useClinicApp((made) => ({ t, owner, vet, staff } = made), { members: ["vet", "staff"], clinic: { timezone: "America/Santiago" } });

interface Slot {
  start: string;
  end: string;
  vet_id: string;
  room_id: string | null;
}
const availability = (query: string, as = owner) => as.as<{ data: Slot[]; timezone: string }>("GET", `/api/v1/availability?${query}`);
const created = async (path: string, json: Record<string, unknown>) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1/${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};

test("working hours default to the clinic's opening hours; the owner or the person sets them", async () => {
  const initial = await owner.as<{ source: string; intervals: unknown[] }>("GET", `/api/v1/users/${vet.user.id}/working-hours`);
  expect(initial.body.source).toBe("clinic_opening_hours");
  expect(initial.body.intervals).toContainEqual({ weekday: 6, start: "10:00", end: "14:00" });
  const byStaff = await staff.as("PUT", `/api/v1/users/${vet.user.id}/working-hours`, { json: { intervals: [] } });
  expect(byStaff.status, byStaff.text).toBe(403);
  const overlapping = await vet.as("PUT", `/api/v1/users/${vet.user.id}/working-hours`, { json: { intervals: [{ weekday: 1, start: "09:00", end: "13:00" }, { weekday: 1, start: "12:00", end: "14:00" }] } });
  expect(overlapping.status, overlapping.text).toBe(422);
  for (const bad of [{ weekday: 8, start: "09:00", end: "10:00" }, { weekday: 1, start: "10:00", end: "09:00" }, { weekday: 1, start: "09:60", end: "10:00" }, { weekday: 1, start: "09:00", end: "24:01" }]) {
    expect((await vet.as("PUT", `/api/v1/users/${vet.user.id}/working-hours`, { json: { intervals: [bad] } })).status).toBe(422);
  }
  const own = await vet.as<{ source: string }>("PUT", `/api/v1/users/${vet.user.id}/working-hours`, { json: { intervals: [{ weekday: 1, start: "09:00", end: "13:30" }, { weekday: 3, start: "15:00", end: "17:00" }] } });
  expect(own.status, own.text).toBe(200);
  expect(own.body.source).toBe("own");
});

test("availability: the vet's hours in the clinic's zone, minus visits, time off, closures, notice and advance", async () => {
  const type = await created("appointment-types", { name: "Consulta", duration_minutes: 30, vet_ids: [vet.user.id], min_notice_minutes: 60, max_advance_days: 30 });
  // Monday 2026-01-19 09:00–13:30 local = 12:00–16:30Z: nine half-hour slots.
  const monday = await availability(`appointment_type_id=${type}&from=2026-01-19&to=2026-01-19`);
  expect(monday.status, monday.text).toBe(200);
  expect(monday.body.timezone).toBe("America/Santiago");
  expect(monday.body.data.map((s) => s.start)).toEqual(["12:00", "12:30", "13:00", "13:30", "14:00", "14:30", "15:00", "15:30", "16:00"].map((h) => `2026-01-19T${h}:00Z`));
  expect(monday.body.data.every((s) => s.vet_id === vet.user.id && s.room_id === null && Date.parse(s.end) - Date.parse(s.start) === 30 * 60_000)).toBe(true);

  // A visit, time off and a closure take their time away.
  const patient = await seedPatient(t, owner);
  expect((await owner.as("POST", "/api/v1/visits", { json: { patient_id: patient, vet_id: vet.user.id, scheduled_at: "2026-01-19T12:30:00Z", ends_at: "2026-01-19T13:15:00Z" } })).status).toBe(201);
  const off = await vet.as<{ id: string }>("POST", `/api/v1/users/${vet.user.id}/time-off`, { json: { starts_at: "2026-01-19T15:00:00Z", ends_at: "2026-01-19T16:00:00Z", reason: "Trámite" } });
  expect(off.status, off.text).toBe(201);
  const busy = await availability(`appointment_type_id=${type}&from=2026-01-19&to=2026-01-19`);
  expect(busy.body.data.map((s) => s.start.slice(11, 16))).toEqual(["12:00", "13:30", "14:00", "14:30", "16:00"]);
  const listed = await vet.as<{ data: { id: string }[] }>("GET", `/api/v1/users/${vet.user.id}/time-off`);
  expect(listed.body.data.map((r) => r.id)).toEqual([off.body.id]);
  expect((await vet.as("DELETE", `/api/v1/users/${vet.user.id}/time-off/${off.body.id}`)).status).toBe(204);
  expect((await availability(`appointment_type_id=${type}&from=2026-01-19&to=2026-01-19`)).body.data).toHaveLength(7);

  const closure = await owner.as<{ id: string }>("POST", "/api/v1/clinic/closures", { json: { day: "2026-01-19", reason: "Inventario" } });
  expect(closure.status, closure.text).toBe(201);
  expect((await owner.as("POST", "/api/v1/clinic/closures", { json: { day: "2026-01-19" } })).status).toBe(409);
  expect((await staff.as("POST", "/api/v1/clinic/closures", { json: { day: "2026-01-20" } })).status).toBe(403);
  expect((await availability(`appointment_type_id=${type}&from=2026-01-19&to=2026-01-19`)).body.data).toEqual([]);
  expect((await owner.as("DELETE", `/api/v1/clinic/closures/${closure.body.id}`)).status).toBe(204);

  // Notice: today (Thursday 15th) is not a working day of the vet; Wednesday 2026-02-25 is past 30 days' advance.
  expect((await availability(`appointment_type_id=${type}&from=2026-02-09&to=2026-02-25`)).body.data.every((s) => s.start < "2026-02-14")).toBe(true);
});

test("the clinic's slot step and a room requirement shape the slots", async () => {
  const room = await created("rooms", { name: "Pabellón" });
  const type = await created("appointment-types", { name: "Curación", duration_minutes: 40, vet_ids: [vet.user.id], room_required: true, buffer_after_minutes: 10 });
  const settings = await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slot_step_minutes: 20 } });
  expect(settings.status, settings.text).toBe(200);
  const wednesday = await availability(`appointment_type_id=${type}&from=2026-01-21&to=2026-01-21`);
  // 15:00–17:00 local = 18:00–20:00Z, 40-minute slots every 20 minutes.
  expect(wednesday.body.data.map((s) => s.start.slice(11, 16))).toEqual(["18:00", "18:20", "18:40", "19:00", "19:20"]);
  expect(wednesday.body.data.every((s) => s.room_id === room)).toBe(true);
  // Someone else in the only room at 18:30–19:00Z (with the type's 10 minutes after each slot).
  const patient = await seedPatient(t, owner);
  expect((await owner.as("POST", "/api/v1/visits", { json: { patient_id: patient, room_id: room, scheduled_at: "2026-01-21T18:30:00Z" } })).status).toBe(201);
  const roomBusy = await availability(`appointment_type_id=${type}&from=2026-01-21&to=2026-01-21`);
  expect(roomBusy.body.data.map((s) => s.start.slice(11, 16))).toEqual(["19:00", "19:20"]);
  await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slot_step_minutes: null } });
});

test("availability refuses a range over 31 days, inverted, or an unknown type", async () => {
  const type = await created("appointment-types", { name: "Vacuna", duration_minutes: 15 });
  expect((await availability(`appointment_type_id=${type}&from=2026-01-01&to=2026-02-01`)).status).toBe(422);
  expect((await availability(`appointment_type_id=${type}&from=2026-01-01&to=2026-01-31`)).status).toBe(200);
  expect((await availability(`appointment_type_id=${type}&from=2026-01-10&to=2026-01-09`)).status).toBe(422);
  expect((await availability(`appointment_type_id=${type}&from=2026-02-30&to=2026-03-01`)).status).toBe(422);
  expect((await availability(`appointment_type_id=01900000-0000-7000-8000-000000000000&from=2026-01-10&to=2026-01-10`)).status).toBe(404);
});

test("calendar settings: the owner sets the slug (unique across clinics) and the opening hours", async () => {
  expect((await staff.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slug: "x-clinic" } })).status).toBe(403);
  const set = await owner.as<{ slug: string }>("PATCH", "/api/v1/clinic/calendar-settings", { json: { slug: "clinica-aromos", opening_hours: [{ weekday: 1, start: "08:00", end: "12:00" }] } });
  expect(set.status, set.text).toBe(200);
  expect((await vet.as<{ slug: string }>("GET", "/api/v1/clinic/calendar-settings")).body).toMatchObject({ slug: "clinica-aromos", opening_hours: [{ weekday: 1, start: "08:00", end: "12:00" }] });
  expect((await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slug: "Not A Slug" } })).status).toBe(422);
  expect((await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { opening_hours: [{ weekday: 1, start: "12:00", end: "08:00" }] } })).status).toBe(422);
});
