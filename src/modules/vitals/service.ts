import { eq } from "drizzle-orm";
import type { Db, ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, liveIn, pageOf, recordView } from "../../db/clinic-records";
import { keyset, type PageRequest } from "../../db/keyset";
import { vitals } from "../../db/schema";
import { MINUTE } from "../../lib/clock";
import { AppError } from "../../lib/errors";
import { patientRecords, recordsOfPatient, syncPatientWeight } from "../patients/service";
import { visitRecords } from "../visits/service";
import type { ClinicalActor } from "../notes/service";
import { MEASURES, type CreateVitalsInput } from "./model";

export const vitalsRecords = clinicRecords(vitals, "Vitals");
/** A patient's measurements in the order they were taken (a chart reads them so). */
export const VITALS_KEYSET = keyset<typeof vitals.$inferSelect>("vitals", [vitals.measured_at, vitals.id]);

export const view = (row: typeof vitals.$inferSelect) => recordView(row);

/** How far ahead of the server's clock a measurement may be dated (a device's clock running fast). */
const FUTURE_SKEW_MS = 5 * MINUTE;

export async function create(ctx: ServiceContext, actor: ClinicalActor, patientId: string, input: CreateVitalsInput) {
  await patientRecords.find(ctx, actor.clinicId, patientId);
  if (!MEASURES.some((measure) => input[measure] !== undefined)) {
    throw AppError.validation([{ path: "body", message: `Send at least one measurement: ${MEASURES.join(", ")}` }]);
  }
  const now = ctx.clock.now();
  const measuredAt = input.measured_at ? new Date(input.measured_at) : now;
  if (measuredAt.getTime() > now.getTime() + FUTURE_SKEW_MS) throw AppError.validation([{ path: "body.measured_at", message: "Must not be in the future" }]);
  await assertReferenced(ctx, actor.clinicId, [{ field: "visit_id", id: input.visit_id, records: visitRecords, what: "visit" }]);
  return ctx.db.transaction(async (tx) => {
    const scoped = { db: tx, clock: ctx.clock };
    const row = await vitalsRecords.insert(scoped, actor.clinicId, { ...input, patient_id: patientId, measured_at: measuredAt, recorded_by: actor.userId });
    if (input.weight_grams !== undefined) await syncPatientWeight(scoped, actor.clinicId, patientId);
    return view(row);
  });
}

/** Delta sync of a patient's vitals: changed after `since`, deleted ones included (the list is by measurement time, below). */
export const changesOfPatient = recordsOfPatient(vitalsRecords, vitals.patient_id).changedSince;

export async function list(ctx: ServiceContext, clinicId: string, patientId: string, page: PageRequest) {
  await patientRecords.find(ctx, clinicId, patientId);
  return pageOf(ctx.db as Db, vitals, [liveIn(vitals, clinicId), eq(vitals.patient_id, patientId)], page, VITALS_KEYSET);
}
