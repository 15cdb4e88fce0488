import { and, eq, isNull } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { clinicRecords, liveIn, recordView } from "../../db/clinic-records";
import { prescriptions, visits } from "../../db/schema";
import { AppError } from "../../lib/errors";
import type { ClinicalActor } from "../notes/service";
import { patientRecords, recordsOfPatient } from "../patients/service";
import type { CreatePrescriptionInput } from "./model";

export const prescriptionRecords = clinicRecords(prescriptions, "Prescription");
type PrescriptionRow = typeof prescriptions.$inferSelect;

export const view = (row: PrescriptionRow) => ({ ...recordView(row), status: row.cancelled_at ? ("cancelled" as const) : ("active" as const) });

/** Issued once by a vet or the owner; its visit, when named, must be one of the same patient. */
export async function create(ctx: ServiceContext, actor: ClinicalActor, patientId: string, input: CreatePrescriptionInput) {
  await patientRecords.find(ctx, actor.clinicId, patientId);
  if (input.visit_id) {
    const [visit] = await ctx.db.select({ id: visits.id }).from(visits).where(and(liveIn(visits, actor.clinicId), eq(visits.id, input.visit_id), eq(visits.patient_id, patientId))).limit(1);
    if (!visit) throw AppError.validation([{ path: "body.visit_id", message: "No such visit of this patient in this clinic" }]);
  }
  return view(await prescriptionRecords.insert(ctx, actor.clinicId, { ...input, patient_id: patientId, prescribed_by: actor.userId }));
}

/** A patient's prescriptions (cancelled ones included), and delta sync of them (a cancellation is a change). */
export const ofPatient = recordsOfPatient(prescriptionRecords, prescriptions.patient_id);

/** Never edited: a mistaken or stopped prescription is cancelled, with who, when and why (once; then 409). */
export async function cancel(ctx: ServiceContext, actor: ClinicalActor, id: string, reason: string) {
  await prescriptionRecords.find(ctx, actor.clinicId, id);
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .update(prescriptions)
    .set({ cancelled_at: now, cancelled_by: actor.userId, cancel_reason: reason, updated_at: now })
    .where(and(liveIn(prescriptions, actor.clinicId), eq(prescriptions.id, id), isNull(prescriptions.cancelled_at)))
    .returning();
  if (!row) throw new AppError("CONFLICT", "The prescription is already cancelled", { id });
  return view(row);
}
