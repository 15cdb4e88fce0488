import { and, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, recordView } from "../../db/clinic-records";
import { alerts, patients, visits } from "../../db/schema";
import { assertNothingBlocks } from "../../db/delete-blockers";
import type { ListActor } from "../../http/clinic-resource";
import type { PageRequest } from "../../db/keyset";
import { AppError } from "../../lib/errors";
import { utcDay } from "../../lib/time";
import { nameMatches, tutorRecords } from "../tutors/service";
import type { CreatePatientInput, PatientFilters, UpdatePatientInput } from "./model";

export const patientRecords = clinicRecords(patients, "Patient");

export const view = (row: typeof patients.$inferSelect) => recordView(row);

const tutorReference = (id: string | undefined) => ({ field: "tutor_id", id, records: tutorRecords, what: "tutor" });

function assertBirthDate(ctx: ServiceContext, birthDate: string | null | undefined) {
  if (!birthDate) return;
  const parsed = new Date(`${birthDate}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== birthDate) {
    throw AppError.validation([{ path: "body.birth_date", message: "Not a calendar date" }]);
  }
  if (birthDate > utcDay(ctx.clock.now())) throw AppError.validation([{ path: "body.birth_date", message: "Must not be in the future" }]);
}

export async function create(ctx: ServiceContext, clinicId: string, input: CreatePatientInput) {
  await assertReferenced(ctx, clinicId, [tutorReference(input.tutor_id)]);
  assertBirthDate(ctx, input.birth_date);
  return view(await patientRecords.insert(ctx, clinicId, { ...input, name: input.name.trim() }));
}

export async function update(ctx: ServiceContext, clinicId: string, id: string, input: UpdatePatientInput) {
  await patientRecords.find(ctx, clinicId, id);
  await assertReferenced(ctx, clinicId, [tutorReference(input.tutor_id)]);
  assertBirthDate(ctx, input.birth_date);
  return view(await patientRecords.update(ctx, clinicId, id, input.name ? { ...input, name: input.name.trim() } : input));
}

/** A patient with scheduled or in-progress visits, or active alerts, cannot be deleted (409). */
export async function remove(ctx: ServiceContext, clinicId: string, id: string) {
  await patientRecords.find(ctx, clinicId, id);
  await assertNothingBlocks(ctx.db, clinicId, "patient", [
    { kind: "open_visits", table: visits, where: and(eq(visits.patient_id, id), inArray(visits.status, ["scheduled", "in_progress"]))! },
    { kind: "active_alerts", table: alerts, where: and(eq(alerts.patient_id, id), eq(alerts.status, "active"))! },
  ]);
  await patientRecords.softDelete(ctx, clinicId, id);
}

export const list = (ctx: ServiceContext, { clinicId }: ListActor, filters: PatientFilters, page: PageRequest) =>
  patientRecords.page(
    ctx,
    clinicId,
    [
      filters.q ? nameMatches(patients.name, filters.q) : undefined,
      filters.tutor_id ? eq(patients.tutor_id, filters.tutor_id) : undefined,
      filters.species ? inArray(patients.species, filters.species.split(",")) : undefined,
    ],
    page,
  );
