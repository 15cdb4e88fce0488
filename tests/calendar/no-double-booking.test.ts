import { expect, test } from "bun:test";
import type { Refusal, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
useClinicApp((made) => ({ t, owner, vet, staff } = made), { members: ["vet", "staff"] });

test("200 concurrent bookings of one vet's slot (overlapping starts, three roles): exactly one 201, the rest 409 SLOT_TAKEN", async () => {
  const patient = await seedPatient(t, owner);
  const sessions = [owner, vet, staff];
  const before = await t.count("visits");
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      sessions[i % 3]!.as<Refusal<{ conflicting_visit_id: string }>>("POST", "/api/v1/visits", {
        // Starts spread over the first 20 minutes: each overlaps every other.
        json: { patient_id: patient, vet_id: vet.user.id, scheduled_at: `2026-03-02T14:${String(i % 20).padStart(2, "0")}:00Z` },
      }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  if (statuses.some((s) => s !== 201 && s !== 409)) console.log(t.logLines.filter((l) => l.includes("rror")).slice(0, 2));
  expect(statuses.filter((s) => s === 201)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(199);
  const winner = answers.find((a) => a.status === 201)!.body as unknown as { id: string };
  for (const refusal of answers.filter((a) => a.status === 409)) {
    expect(refusal.body.code).toBe("SLOT_TAKEN");
    expect(refusal.body.details.conflicting_visit_id).toBe(winner.id);
  }
  expect(await t.count("visits")).toBe(before + 1);
}, 120_000);
