import { and, desc, eq, inArray, isNotNull, isNull, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, recordView } from "../../db/clinic-records";
import { alerts, patients, visits, vitals } from "../../db/schema";
import { newId } from "../../lib/crypto";
import { assertNothingBlocks } from "../../db/delete-blockers";
import type { ListActor } from "../../http/clinic-resource";
import type { Page, PageRequest } from "../../db/keyset";
import { AppError } from "../../lib/errors";
import { utcDay } from "../../lib/time";
import { nameMatches, tutorRecords } from "../tutors/service";
import type { CreatePatientInput, PatientFilters, UpdatePatientInput } from "./model";

export const patientRecords = clinicRecords(patients, "Patient");

/** What `recordsOfPatient` reads through: a record's clinic records (db/clinic-records). */
interface ClinicRecordReads<Row> {
  page(ctx: ServiceContext, clinicId: string, filters: (SQL | undefined)[], page: PageRequest): Promise<Page<Row>>;
  changedSince(ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest, scope: (SQL | undefined)[]): Promise<Page<Row>>;
}

/**
 * The reads of a record kept under a patient (vitals, vaccinations, prescriptions): the patient
 * must be one of the clinic's (404 otherwise), then its records in the list's order (by
 * creation), or those changed after a moment, deleted ones included.
 */
export function recordsOfPatient<Row>(records: ClinicRecordReads<Row>, patientColumn: AnyPgColumn) {
  const ofPatient = (patientId: string) => [eq(patientColumn, patientId)];
  return {
    async list(ctx: ServiceContext, clinicId: string, patientId: string, page: PageRequest) {
      await patientRecords.find(ctx, clinicId, patientId);
      return records.page(ctx, clinicId, ofPatient(patientId), page);
    },
    async changedSince(ctx: ServiceContext, clinicId: string, patientId: string, since: Date, page: PageRequest) {
      await patientRecords.find(ctx, clinicId, patientId);
      return records.changedSince(ctx, clinicId, since, page, ofPatient(patientId));
    },
  };
}

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

/**
 * The one weight rule: a patient's `weight_grams` is the weight of its latest measurement (by
 * `measured_at`) in its vitals, written in the same transaction as each weighing.
 */
export async function syncPatientWeight(ctx: ServiceContext, clinicId: string, patientId: string): Promise<number | null> {
  const [latest] = await ctx.db
    .select({ grams: vitals.weight_grams })
    .from(vitals)
    .where(and(eq(vitals.clinic_id, clinicId), eq(vitals.patient_id, patientId), isNull(vitals.deleted_at), isNotNull(vitals.weight_grams)))
    .orderBy(desc(vitals.measured_at), desc(vitals.id))
    .limit(1);
  const grams = latest?.grams ?? null;
  await ctx.db.update(patients).set({ weight_grams: grams, updated_at: ctx.clock.now() }).where(and(eq(patients.clinic_id, clinicId), eq(patients.id, patientId)));
  return grams;
}

/** A weight sent on the patient itself is a weighing now: it joins the vitals, so the history keeps it. */
async function recordWeighing(ctx: ServiceContext, clinicId: string, patientId: string, grams: number) {
  const now = ctx.clock.now();
  await ctx.db.insert(vitals).values({ id: newId(), clinic_id: clinicId, created_at: now, updated_at: now, patient_id: patientId, measured_at: now, weight_grams: grams });
  await syncPatientWeight(ctx, clinicId, patientId);
}

export async function create(ctx: ServiceContext, clinicId: string, input: CreatePatientInput) {
  await assertReferenced(ctx, clinicId, [tutorReference(input.tutor_id)]);
  assertBirthDate(ctx, input.birth_date);
  return ctx.db.transaction(async (tx) => {
    const scoped = { db: tx, clock: ctx.clock };
    const { weight_grams: grams, ...fields } = input;
    const row = await patientRecords.insert(scoped, clinicId, { ...fields, name: input.name.trim() });
    if (grams == null) return view(row);
    await recordWeighing(scoped, clinicId, row.id, grams);
    return view(await patientRecords.find(scoped, clinicId, row.id));
  });
}

export async function update(ctx: ServiceContext, clinicId: string, id: string, input: UpdatePatientInput) {
  await patientRecords.find(ctx, clinicId, id);
  await assertReferenced(ctx, clinicId, [tutorReference(input.tutor_id)]);
  assertBirthDate(ctx, input.birth_date);
  if (input.weight_grams === null) {
    throw AppError.validation([{ path: "body.weight_grams", message: "The weight is the latest measured one and cannot be cleared; record a new weighing instead" }]);
  }
  const { weight_grams: grams, ...fields } = input;
  return ctx.db.transaction(async (tx) => {
    const scoped = { db: tx, clock: ctx.clock };
    if (grams !== undefined) await recordWeighing(scoped, clinicId, id, grams);
    if (Object.keys(fields).length === 0) return view(await patientRecords.find(scoped, clinicId, id));
    return view(await patientRecords.update(scoped, clinicId, id, fields.name ? { ...fields, name: fields.name.trim() } : fields));
  });
}

/**
 * A patient with scheduled or in-progress visits, or active alerts, cannot be deleted (409).
 * Deleting is a soft delete: its clinical record (notes, vitals, vaccinations, prescriptions)
 * stays as it is, and its open vaccine due dates leave the due list.
 */
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
