import { and, eq, inArray, isNull, ne, notInArray, or, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { pgErrorCode } from "../../db/client";
import { assertReferenced, clinicRecords, recordView, withinDays } from "../../db/clinic-records";
import { RELEASED_VISIT_STATUSES, rooms, visits, type VisitStatus } from "../../db/schema";
import type { ListActor } from "../../http/clinic-resource";
import { keyset, type PageRequest } from "../../db/keyset";
import { AppError } from "../../lib/errors";
import { addDays, dayInZone } from "../../lib/time";
import { appointmentTypeRecords } from "../appointment-types/service";
import { clinicTimeZone, findSlots, slotView } from "../availability/service";
import { patientRecords } from "../patients/service";
import { roomRecords } from "../rooms/service";
import { userRecords } from "../users/service";
import type { CreateVisitInput, UpdateVisitInput, VisitFilters } from "./model";

export const visitRecords = clinicRecords(visits, "Visit");
type VisitRow = typeof visits.$inferSelect;

export const view = (row: VisitRow) => recordView(row);

const MINUTE = 60_000;
/** A visit without a type and without an end lasts this long. */
export const DEFAULT_VISIT_MINUTES = 30;

/**
 * The visit life cycle: requested (booked online, awaiting the clinic) → scheduled | cancelled;
 * scheduled → in_progress → completed; scheduled → cancelled | no_show.
 */
export const VISIT_TRANSITIONS: Record<VisitStatus, readonly VisitStatus[]> = {
  requested: ["scheduled", "cancelled"],
  scheduled: ["in_progress", "cancelled", "no_show"],
  in_progress: ["completed"],
  completed: [],
  cancelled: [],
  no_show: [],
};

/** Statuses in which a visit may still be moved to another time, vet, room or patient. */
const MOVABLE: readonly VisitStatus[] = ["requested", "scheduled"];

/** The patient, vet, type and room a visit names must be live records of the clinic. */
const assertReferences = (ctx: ServiceContext, clinicId: string, input: { patient_id?: string; vet_id?: string | null; appointment_type_id?: string | null; room_id?: string | null }) =>
  assertReferenced(ctx, clinicId, [
    { field: "patient_id", id: input.patient_id, records: patientRecords, what: "patient" },
    { field: "vet_id", id: input.vet_id, records: userRecords, what: "user" },
    { field: "appointment_type_id", id: input.appointment_type_id, records: appointmentTypeRecords, what: "appointment type" },
    { field: "room_id", id: input.room_id, records: roomRecords, what: "room" },
  ]);

/** Where a visit sits in time and what it holds, before it is written. */
interface Placement {
  scheduled_at: Date;
  ends_at: Date;
  vet_id: string | null;
  room_id: string | null;
  appointment_type_id: string | null;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
}

/** The type's length and buffers apply; an explicit end wins over the type's length. */
async function place(ctx: ServiceContext, clinicId: string, start: Date, explicitEnd: Date | undefined, typeId: string | null, fallbackMinutes: number, base: Pick<Placement, "vet_id" | "room_id">): Promise<Placement> {
  const type = typeId ? await appointmentTypeRecords.find(ctx, clinicId, typeId).catch(() => null) : null;
  const minutes = type?.duration_minutes ?? fallbackMinutes;
  const ends = explicitEnd ?? new Date(start.getTime() + minutes * MINUTE);
  if (ends.getTime() <= start.getTime()) throw AppError.validation([{ path: "body.ends_at", message: "Must be after scheduled_at" }]);
  if (ends.getTime() - start.getTime() > 24 * 60 * MINUTE) throw AppError.validation([{ path: "body.ends_at", message: "A visit lasts at most 24 hours" }]);
  const placement: Placement = {
    scheduled_at: start,
    ends_at: ends,
    vet_id: base.vet_id,
    room_id: base.room_id,
    appointment_type_id: typeId,
    buffer_before_minutes: type?.buffer_before_minutes ?? 0,
    buffer_after_minutes: type?.buffer_after_minutes ?? 0,
  };
  if (type?.room_required && !placement.room_id) placement.room_id = await firstFreeRoom(ctx, clinicId, placement);
  return placement;
}

/** SQL for the time a visit holds (its buffers included), as the exclusion constraints compare it. */
const holdOf = (p: Pick<Placement, "scheduled_at" | "ends_at" | "buffer_before_minutes" | "buffer_after_minutes">) =>
  sql`visit_hold(${p.scheduled_at.toISOString()}::timestamptz, ${p.ends_at.toISOString()}::timestamptz, ${p.buffer_before_minutes}::int, ${p.buffer_after_minutes}::int)`;
const visitHold = sql`visit_hold(${visits.scheduled_at}, ${visits.ends_at}, ${visits.buffer_before_minutes}, ${visits.buffer_after_minutes})`;
const holdsTime = [isNull(visits.deleted_at), notInArray(visits.status, [...RELEASED_VISIT_STATUSES])];

/** A room free for the placement (the first by creation), or null when every room is taken. */
async function firstFreeRoom(ctx: ServiceContext, clinicId: string, placement: Placement): Promise<string | null> {
  const [room] = await ctx.db
    .select({ id: rooms.id })
    .from(rooms)
    .where(
      and(
        eq(rooms.clinic_id, clinicId),
        isNull(rooms.deleted_at),
        sql`not exists (select 1 from ${visits} where ${visits.clinic_id} = ${clinicId} and ${visits.room_id} = ${rooms.id} and ${visits.deleted_at} is null and ${visits.status} not in ('cancelled', 'no_show') and ${visitHold} && ${holdOf(placement)})`,
      ),
    )
    .orderBy(rooms.created_at, rooms.id)
    .limit(1);
  return room?.id ?? null;
}

/**
 * The 409 for a placement the exclusion constraints refused: the visit in the way, and up to
 * three free starts of the same length for the same vet (or room) from the asked time on.
 */
export async function slotTaken(ctx: ServiceContext, clinicId: string, placement: Placement, movingVisitId?: string): Promise<AppError> {
  const sameResource = or(placement.vet_id ? eq(visits.vet_id, placement.vet_id) : undefined, placement.room_id ? eq(visits.room_id, placement.room_id) : undefined);
  const [conflict] = await ctx.db
    .select({ id: visits.id })
    .from(visits)
    .where(and(eq(visits.clinic_id, clinicId), ...holdsTime, sameResource, movingVisitId ? ne(visits.id, movingVisitId) : undefined, sql`${visitHold} && ${holdOf(placement)}`))
    .orderBy(visits.scheduled_at)
    .limit(1);
  const timeZone = await clinicTimeZone(ctx, clinicId);
  const from = dayInZone(placement.scheduled_at, timeZone);
  const { slots } = await findSlots(
    ctx,
    clinicId,
    {
      duration_minutes: Math.round((placement.ends_at.getTime() - placement.scheduled_at.getTime()) / MINUTE),
      buffer_before_minutes: placement.buffer_before_minutes,
      buffer_after_minutes: placement.buffer_after_minutes,
      min_notice_minutes: 0,
      max_advance_days: 3650,
      room_required: placement.room_id !== null,
      vet_ids: placement.vet_id ? [placement.vet_id] : [],
    },
    { from, to: addDays(from, 13), ...(movingVisitId ? { ignoreVisitId: movingVisitId } : {}) },
  );
  const alternatives = slots
    .filter((slot) => slot.start >= placement.scheduled_at.getTime() && (!placement.vet_id || slot.vet_id === placement.vet_id))
    .slice(0, 3)
    .map(slotView);
  return new AppError("SLOT_TAKEN", "The vet or the room is already booked at that time", { conflicting_visit_id: conflict?.id ?? null, alternatives });
}

/**
 * Runs a write that places a visit; the exclusion constraints' refusal becomes SLOT_TAKEN.
 * Concurrent writes for one vet or room wait on each other's index entries, which PostgreSQL can
 * break as a deadlock; so writers of the same vet or room first queue on a transaction-scoped
 * advisory lock (taken in one order), and the constraint then refuses every one after the first.
 */
export async function holdingSlot<T>(ctx: ServiceContext, clinicId: string, placement: Placement, write: (ctx: ServiceContext) => Promise<T>, movingVisitId?: string): Promise<T> {
  const resources = [placement.vet_id && `vet:${placement.vet_id}`, placement.room_id && `room:${placement.room_id}`].filter((r): r is string => !!r).sort();
  try {
    if (!resources.length) return await write(ctx);
    return await ctx.db.transaction(async (tx) => {
      for (const resource of resources) await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${clinicId}:${resource}`}, 0))`);
      return write({ db: tx, clock: ctx.clock });
    });
  } catch (error) {
    if (pgErrorCode(error) === "23P01") throw await slotTaken(ctx, clinicId, placement, movingVisitId);
    throw error;
  }
}

/** A new visit; `status` is `scheduled` unless an online booking asks for `requested`. */
export async function create(ctx: ServiceContext, clinicId: string, input: CreateVisitInput, status: "scheduled" | "requested" = "scheduled") {
  await assertReferences(ctx, clinicId, input);
  const { ends_at, ...fields } = input;
  const placement = await place(ctx, clinicId, new Date(input.scheduled_at), ends_at ? new Date(ends_at) : undefined, input.appointment_type_id ?? null, DEFAULT_VISIT_MINUTES, {
    vet_id: input.vet_id ?? null,
    room_id: input.room_id ?? null,
  });
  return view(await holdingSlot(ctx, clinicId, placement, (tx) => visitRecords.insert(tx, clinicId, { ...fields, ...placement, status })));
}

/**
 * Partial update; a `status` moves the visit through the state machine and stamps
 * `started_at`/`completed_at`. Moving it (time, vet, room, type, patient) only while requested or
 * scheduled; a new start without an end keeps its length. Every change bumps `revision`.
 */
export async function update(ctx: ServiceContext, clinicId: string, id: string, input: UpdateVisitInput) {
  const current = await visitRecords.find(ctx, clinicId, id);
  const allowed = VISIT_TRANSITIONS[current.status];
  if (input.status !== undefined && !allowed.includes(input.status)) {
    throw new AppError("INVALID_STATE_TRANSITION", `A ${current.status} visit cannot become ${input.status}`, { from: current.status, to: input.status, allowed });
  }
  const moves = [input.scheduled_at, input.ends_at, input.patient_id, input.vet_id, input.room_id, input.appointment_type_id].some((v) => v !== undefined);
  if (moves && !MOVABLE.includes(current.status)) {
    throw new AppError("INVALID_STATE_TRANSITION", `A ${current.status} visit cannot be rescheduled or moved to another patient`);
  }
  await assertReferences(ctx, clinicId, input);
  const { ends_at, scheduled_at, ...fields } = input;
  const start = scheduled_at === undefined ? current.scheduled_at : new Date(scheduled_at);
  const typeId = input.appointment_type_id === undefined ? current.appointment_type_id : input.appointment_type_id;
  const lengthMinutes = (current.ends_at.getTime() - current.scheduled_at.getTime()) / MINUTE;
  // A new type sets the length; otherwise the visit keeps its own.
  const explicitEnd = ends_at !== undefined ? new Date(ends_at) : input.appointment_type_id !== undefined && typeId ? undefined : new Date(start.getTime() + lengthMinutes * MINUTE);
  const placement = moves
    ? await place(ctx, clinicId, start, explicitEnd, typeId, lengthMinutes, {
        vet_id: input.vet_id === undefined ? current.vet_id : input.vet_id,
        room_id: input.room_id === undefined ? current.room_id : input.room_id,
      })
    : undefined;
  const changes = {
    ...fields,
    ...placement,
    revision: current.revision + 1,
    started_at: input.status === "in_progress" ? ctx.clock.now() : undefined,
    completed_at: input.status === "completed" ? ctx.clock.now() : undefined,
  };
  // Fields left undefined are not set (Drizzle leaves them out of the UPDATE).
  const write = (tx: ServiceContext) => visitRecords.update(tx, clinicId, id, changes);
  return view(placement ? await holdingSlot(ctx, clinicId, placement, write, id) : await write(ctx));
}

export async function remove(ctx: ServiceContext, clinicId: string, id: string) {
  await visitRecords.find(ctx, clinicId, id);
  await ctx.db.update(visits).set({ revision: sql`${visits.revision} + 1` }).where(and(eq(visits.clinic_id, clinicId), eq(visits.id, id)));
  await visitRecords.softDelete(ctx, clinicId, id);
}

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
  return visitRecords.update(ctx, clinicId, id, { confirmed_at: ctx.clock.now(), revision: current.revision + 1 });
}

/** The tutor cancels (a reminder's signed link), no later than `windowMinutes` before the visit. */
export async function cancelByTutor(ctx: ServiceContext, clinicId: string, id: string, remindedAt: Date, windowMinutes: number) {
  const current = await visitRecords.find(ctx, clinicId, id);
  if (current.status === "cancelled") return current;
  if (current.status !== "scheduled" || current.scheduled_at.getTime() !== remindedAt.getTime()) {
    throw new AppError("INVALID_STATE_TRANSITION", "This visit was moved or is no longer scheduled: the reminder's link no longer applies");
  }
  if (ctx.clock.now().getTime() > current.scheduled_at.getTime() - windowMinutes * 60_000) {
    const window = windowMinutes % 60 === 0 ? `${windowMinutes / 60} hours` : `${windowMinutes} minutes`;
    throw new AppError("INVALID_STATE_TRANSITION", `Visits can be cancelled online until ${window} before; please call the clinic`);
  }
  return visitRecords.update(ctx, clinicId, id, { status: "cancelled", revision: current.revision + 1 });
}
