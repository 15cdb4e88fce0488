import { expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/config";
import type { Refusal, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
// Every request here comes from one address; the public limits are out of the way (booking-limits.test.ts checks them).
useClinicApp((made) => ({ t, owner, vet, staff } = made), {
  members: ["vet", "staff"],
  clinic: { timezone: "America/Santiago" },
  config: { limits: { ...DEFAULT_LIMITS, authPerIpPerMinute: 10_000, perUserPerMinute: 100_000, publicPerIpPerMinute: 10_000, publicPerClinicPerMinute: 10_000 } },
});

test("200 concurrent bookings of one slot, tutors online and staff together: exactly one 201, the rest 409 SLOT_TAKEN", async () => {
  expect((await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { slug: "carrera" } })).status).toBe(200);
  const type = await owner.as<{ id: string }>("POST", "/api/v1/appointment-types", { json: { name: "Consulta", duration_minutes: 30, vet_ids: [vet.user.id], bookable_online: true } });
  expect(type.status, type.text).toBe(201);
  const patient = await seedPatient(t, owner);
  const sessions = [owner, vet, staff];
  const before = await Promise.all(["visits", "tutors", "patients", "consent_records"].map((table) => t.count(table)));
  // Monday 2026-01-19 10:00 in Santiago (13:00Z): a slot of the vet's opening hours.
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0
        ? t.request<Refusal<{ conflicting_visit_id: string }>>("POST", "/api/v1/public/clinics/carrera/bookings", {
            headers: { "idempotency-key": crypto.randomUUID() },
            json: {
              appointment_type_id: type.body.id,
              start: "2026-01-19T13:00:00Z",
              tutor: { name: `Tutor ${i}`, phone: `+569${String(10_000_000 + i)}`, email: `tutor${i}@example.cl` },
              patient: { name: `Mascota ${i}`, species: "dog" },
              consents: { email_reminders: true, whatsapp_reminders: true },
            },
          })
        : sessions[i % 3]!.as<Refusal<{ conflicting_visit_id: string }>>("POST", "/api/v1/visits", {
            // Staff starts spread over the slot's first 20 minutes: each overlaps the online slot.
            json: { patient_id: patient, vet_id: vet.user.id, scheduled_at: `2026-01-19T13:${String(i % 20).padStart(2, "0")}:00Z` },
          }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  if (statuses.some((s) => s !== 201 && s !== 409)) console.log(answers.filter((a) => a.status !== 201 && a.status !== 409).slice(0, 2).map((a) => a.text));
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(199);
  const won = answers.find((a) => a.status === 201)!.body as unknown as { id?: string; booking?: { id: string } };
  const winner = won.booking?.id ?? won.id!;
  for (const refusal of answers.filter((a) => a.status === 409)) {
    expect(refusal.body.code).toBe("SLOT_TAKEN");
    expect(refusal.body.details.conflicting_visit_id).toBe(winner);
  }
  // One visit; a public winner also leaves its tutor, pet and two consents, a loser nothing.
  const after = await Promise.all(["visits", "tutors", "patients", "consent_records"].map((table) => t.count(table)));
  const publicWon = won.booking !== undefined;
  expect(after).toEqual([before[0]! + 1, before[1]! + (publicWon ? 1 : 0), before[2]! + (publicWon ? 1 : 0), before[3]! + (publicWon ? 2 : 0)]);
}, 180_000);
