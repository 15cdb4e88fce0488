import { eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, recordView, withinDays } from "../../db/clinic-records";
import { visits, type VisitStatus } from "../../db/schema";
import type { ListActor } from "../../http/clinic-resource";
import { keyset, type PageRequest } from "../../db/keyset";
import { AppError } from "../../lib/errors";
import { patientRecords } from "../patients/service";
import { userRecords } from "../users/service";
import type { CreateVisitInput, UpdateVisitInput, VisitFilters } from "./model";

export const visitRecords = clinicRecords(visits, "Visit");
type VisitRow = typeof visits.$inferSelect;

export const view = (row: VisitRow) => recordView(row);

/** The visit life cycle: scheduled → in_progress → completed; scheduled → cancelled | no_show. */
export const VISIT_TRANSITIONS: Record<VisitStatus, readonly VisitStatus[]> = {
  scheduled: ["in_progress", "cancelled", "no_show"],
  in_progress: ["completed"],
  completed: [],
  cancelled: [],
  no_show: [],
};

/** The patient and the vet a visit names must be live records of the clinic. */
const assertReferences = (ctx: ServiceContext, clinicId: string, input: { patient_id?: string; vet_id?: string | null }) =>
  assertReferenced(ctx, clinicId, [
    { field: "patient_id", id: input.patient_id, records: patientRecords, what: "patient" },
    { field: "vet_id", id: input.vet_id, records: userRecords, what: "user" },
  ]);

export async function create(ctx: ServiceContext, clinicId: string, input: CreateVisitInput) {
  await assertReferences(ctx, clinicId, input);
  return view(await visitRecords.insert(ctx, clinicId, { ...input, scheduled_at: new Date(input.scheduled_at), status: "scheduled" }));
}

/**
 * Partial update; a `status` moves the visit through the state machine and stamps
 * `started_at`/`completed_at`. Rescheduling or re-assigning the patient only while scheduled.
 */
export async function update(ctx: ServiceContext, clinicId: string, id: string, input: UpdateVisitInput) {
  const current = await visitRecords.find(ctx, clinicId, id);
  const allowed = VISIT_TRANSITIONS[current.status];
  if (input.status !== undefined && !allowed.includes(input.status)) {
    throw new AppError("INVALID_STATE_TRANSITION", `A ${current.status} visit cannot become ${input.status}`, { from: current.status, to: input.status, allowed });
  }
  if ((input.scheduled_at !== undefined || input.patient_id !== undefined) && current.status !== "scheduled") {
    throw new AppError("INVALID_STATE_TRANSITION", `A ${current.status} visit cannot be rescheduled or moved to another patient`);
  }
  await assertReferences(ctx, clinicId, input);
  // Fields left undefined are not set (Drizzle leaves them out of the UPDATE).
  return view(
    await visitRecords.update(ctx, clinicId, id, {
      ...input,
      scheduled_at: input.scheduled_at === undefined ? undefined : new Date(input.scheduled_at),
      started_at: input.status === "in_progress" ? ctx.clock.now() : undefined,
      completed_at: input.status === "completed" ? ctx.clock.now() : undefined,
    }),
  );
}

export const remove = (ctx: ServiceContext, clinicId: string, id: string) => visitRecords.softDelete(ctx, clinicId, id);

/** Filters shared by /visits and the operations board; dates are on `scheduled_at`, in the clinic's zone. */
export function visitConditions(filters: VisitFilters, timeZone: string) {
  return [
    ...withinDays(visits.scheduled_at, filters, timeZone),
    filters.status ? inArray(visits.status, filters.status.split(",") as VisitStatus[]) : undefined,
    filters.patient_id ? eq(visits.patient_id, filters.patient_id) : undefined,
    filters.vet_id ? eq(visits.vet_id, filters.vet_id) : undefined,
  ];
}

/**
 * A list filtered by date is read in the order of its filter's column, by scheduled time (then
 * id), so the (clinic_id, scheduled_at, id) index serves the range and the order together; any
 * other list stays in the order of creation. The two orders have their own cursors.
 */
export const VISITS_BY_SCHEDULE = keyset<VisitRow>("visits:scheduled", [visits.scheduled_at, visits.id]);
export const listKeyset = (filters: VisitFilters) => (filters.date_from !== undefined || filters.date_to !== undefined ? VISITS_BY_SCHEDULE : visitRecords.keyset);

export const list = (ctx: ServiceContext, { clinicId, timezone: timeZone }: ListActor, filters: VisitFilters, page: PageRequest) =>
  visitRecords.page(ctx, clinicId, visitConditions(filters, timeZone), page, listKeyset(filters));

/**
 * The tutor confirms attendance (a reminder's signed link): only a visit still scheduled at the
 * moment the reminder named. Resolves to the visit as it now is.
 */
export async function confirmByTutor(ctx: ServiceContext, clinicId: string, id: string, remindedAt: Date) {
  const current = await visitRecords.find(ctx, clinicId, id);
  if (current.status !== "scheduled" || current.scheduled_at.getTime() !== remindedAt.getTime()) {
    throw new AppError("INVALID_STATE_TRANSITION", "This visit was moved or is no longer scheduled: the reminder's link no longer applies");
  }
  if (current.confirmed_at) return current;
  return visitRecords.update(ctx, clinicId, id, { confirmed_at: ctx.clock.now() });
}

/** The tutor cancels (a reminder's signed link), no later than `windowHours` before the visit. */
export async function cancelByTutor(ctx: ServiceContext, clinicId: string, id: string, remindedAt: Date, windowHours: number) {
  const current = await visitRecords.find(ctx, clinicId, id);
  if (current.status === "cancelled") return current;
  if (current.status !== "scheduled" || current.scheduled_at.getTime() !== remindedAt.getTime()) {
    throw new AppError("INVALID_STATE_TRANSITION", "This visit was moved or is no longer scheduled: the reminder's link no longer applies");
  }
  if (ctx.clock.now().getTime() > current.scheduled_at.getTime() - windowHours * 3_600_000) {
    throw new AppError("INVALID_STATE_TRANSITION", `Visits can be cancelled online until ${windowHours} hours before; please call the clinic`);
  }
  return visitRecords.update(ctx, clinicId, id, { status: "cancelled" });
}
