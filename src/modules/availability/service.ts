import { and, eq, gt, inArray, isNull, lt, ne, notInArray, or, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { clinicClosures, clinics, RELEASED_VISIT_STATUSES, rooms, timeOff, users, visits, workingHours, type WeeklyInterval } from "../../db/schema";
import { AppError } from "../../lib/errors";
import { addDays, dateProblem, rfc3339, startOfDayInZone, type InstantRange } from "../../lib/time";
import { appointmentTypeRecords } from "../appointment-types/service";
import { getCalendarSettings } from "../clinic/calendar-settings";
import { freeSlots, type Slot, type SlotRules } from "./slots";

/** The longest range one availability question may span. */
export const MAX_AVAILABILITY_DAYS = 31;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

export interface AvailabilityRequest {
  from: string;
  to: string;
  vetId?: string;
  /** Leave this visit out of what is busy (it is being moved). */
  ignoreVisitId?: string;
}

/** The clinic's time zone, or 404. */
export async function clinicTimeZone(ctx: Pick<ServiceContext, "db">, clinicId: string): Promise<string> {
  const [clinic] = await ctx.db.select({ timezone: clinics.timezone }).from(clinics).where(eq(clinics.id, clinicId));
  if (!clinic) throw AppError.notFound("Clinic");
  return clinic.timezone;
}

/** `from`/`to` as the query gives them: real days, in order, at most 31 days. */
export function assertDayRange(from: string, to: string, pathPrefix = "query") {
  const fields = [];
  const fromProblem = dateProblem(from);
  const toProblem = dateProblem(to);
  if (fromProblem) fields.push({ path: `${pathPrefix}.from`, message: fromProblem });
  if (toProblem) fields.push({ path: `${pathPrefix}.to`, message: toProblem });
  if (!fields.length && to < from) fields.push({ path: `${pathPrefix}.to`, message: "Must not be before from" });
  if (!fields.length && addDays(from, MAX_AVAILABILITY_DAYS - 1) < to) fields.push({ path: `${pathPrefix}.to`, message: `At most ${MAX_AVAILABILITY_DAYS} days from from` });
  if (fields.length) throw AppError.validation(fields, "Invalid day range");
}

/**
 * The free slots of a clinic for an appointment (a type's rules, or a length without buffers),
 * from the data in the database: vets' hours (the clinic's opening hours where a vet has none),
 * closures, time off, live visits with their buffers, rooms.
 */
export async function findSlots(ctx: ServiceContext, clinicId: string, rulesToRead: SlotRules & { vet_ids: string[] } | Promise<SlotRules & { vet_ids: string[] }>, request: AvailabilityRequest): Promise<{ slots: Slot[]; timezone: string }> {
  // The rules may still be on their way from the database: the clinic's settings are read meanwhile.
  const [timeZone, settings, rules] = await Promise.all([clinicTimeZone(ctx, clinicId), getCalendarSettings(ctx, clinicId), rulesToRead]);
  const vetConditions = [eq(users.clinic_id, clinicId), isNull(users.deleted_at)];
  if (rules.vet_ids.length) vetConditions.push(inArray(users.id, rules.vet_ids));
  else vetConditions.push(eq(users.role, "vet"));
  if (request.vetId) vetConditions.push(eq(users.id, request.vetId));
  // The vets in question, as a subquery: every read below runs at once, none waits for their ids.
  const vetIdsOf = () => ctx.db.select({ id: users.id }).from(users).where(and(...vetConditions));
  const rangeStart = startOfDayInZone(request.from, timeZone);
  const rangeEnd = startOfDayInZone(addDays(request.to, 1), timeZone);
  // Visits and time off reaching into the range: none lasts more than a day and its buffers.
  const reachStart = new Date(rangeStart.getTime() - 2 * DAY);
  const reachEnd = new Date(rangeEnd.getTime() + 2 * DAY);

  // The span any slot's held time can cover: from the first possible start (the range's, or
  // the minimum notice's) less the type's buffer before, to the range's end plus its buffer after.
  const earliest = ctx.clock.now().getTime() + rules.min_notice_minutes * MINUTE;
  const holdWindow = {
    start: new Date(Math.max(rangeStart.getTime(), earliest) - rules.buffer_before_minutes * MINUTE),
    end: new Date(rangeEnd.getTime() + rules.buffer_after_minutes * MINUTE),
  };

  const [vetRows, hours, closures, absences, held, roomRows] = await Promise.all([
    vetIdsOf().orderBy(users.id),
    ctx.db.select().from(workingHours).where(and(eq(workingHours.clinic_id, clinicId), inArray(workingHours.user_id, vetIdsOf()))),
    ctx.db
      .select({ day: clinicClosures.day })
      .from(clinicClosures)
      .where(and(eq(clinicClosures.clinic_id, clinicId), isNull(clinicClosures.deleted_at), sql`${clinicClosures.day} between ${request.from} and ${request.to}`)),
    ctx.db
      .select({ user_id: timeOff.user_id, starts_at: timeOff.starts_at, ends_at: timeOff.ends_at })
      .from(timeOff)
      .where(and(eq(timeOff.clinic_id, clinicId), isNull(timeOff.deleted_at), inArray(timeOff.user_id, vetIdsOf()), lt(timeOff.starts_at, rangeEnd), gt(timeOff.ends_at, rangeStart))),
    // The live visits whose held time (buffers included) can meet a slot of this question, one
    // row per vet and room: their held spans as "start,end,start,end…" in epoch milliseconds,
    // in order of start. Reading thousands of visits as a few strings, not as rows of
    // timestamps, is most of what keeps this answer fast.
    ctx.db
      .select({
        vet_id: visits.vet_id,
        room_id: visits.room_id,
        holds: sql<string>`string_agg(((extract(epoch from ${visits.scheduled_at}) * 1000)::bigint - ${visits.buffer_before_minutes}::bigint * 60000)::text || ',' || ((extract(epoch from ${visits.ends_at}) * 1000)::bigint + ${visits.buffer_after_minutes}::bigint * 60000)::text, ',' order by ${visits.scheduled_at})`,
      })
      .from(visits)
      .where(
        and(
          eq(visits.clinic_id, clinicId),
          isNull(visits.deleted_at),
          notInArray(visits.status, [...RELEASED_VISIT_STATUSES]),
          lt(visits.scheduled_at, reachEnd),
          gt(visits.scheduled_at, reachStart),
          sql`${visits.scheduled_at} - ${visits.buffer_before_minutes} * interval '1 minute' < ${holdWindow.end.toISOString()}::timestamptz`,
          sql`${visits.ends_at} + ${visits.buffer_after_minutes} * interval '1 minute' > ${holdWindow.start.toISOString()}::timestamptz`,
          request.ignoreVisitId ? ne(visits.id, request.ignoreVisitId) : undefined,
          rules.room_required ? or(inArray(visits.vet_id, vetIdsOf()), sql`${visits.room_id} is not null`) : inArray(visits.vet_id, vetIdsOf()),
        ),
      )
      .groupBy(visits.vet_id, visits.room_id),
    rules.room_required
      ? ctx.db.select({ id: rooms.id }).from(rooms).where(and(eq(rooms.clinic_id, clinicId), isNull(rooms.deleted_at))).orderBy(rooms.created_at, rooms.id)
      : Promise.resolve([]),
  ]);

  const vetIds = vetRows.map((v) => v.id);
  if (!vetIds.length) return { slots: [], timezone: timeZone };
  const hoursOf = new Map<string, WeeklyInterval[]>(hours.map((h) => [h.user_id, h.intervals]));
  const busyOf = new Map<string, InstantRange[]>();
  const busy = (key: string) => busyOf.get(key) ?? (busyOf.set(key, []), busyOf.get(key)!);
  for (const absence of absences) busy(absence.user_id).push({ start: absence.starts_at.getTime(), end: absence.ends_at.getTime() });
  for (const group of held) {
    const bounds = group.holds.split(",");
    const vetBusy = group.vet_id ? busy(group.vet_id) : null;
    const roomBusy = group.room_id ? busy(`room:${group.room_id}`) : null;
    for (let i = 0; i + 1 < bounds.length; i += 2) {
      const hold = { start: Number(bounds[i]), end: Number(bounds[i + 1]) };
      vetBusy?.push(hold);
      roomBusy?.push(hold);
    }
  }
  const slots = freeSlots({
    timeZone,
    from: request.from,
    to: request.to,
    now: ctx.clock.now().getTime(),
    rules,
    stepMinutes: settings.slot_step_minutes ?? rules.duration_minutes,
    vets: vetIds.map((id) => ({ id, intervals: hoursOf.get(id) ?? settings.opening_hours, busy: busyOf.get(id) ?? [] })),
    rooms: roomRows.map((r) => ({ id: r.id, busy: busyOf.get(`room:${r.id}`) ?? [] })),
    closedDays: new Set(closures.map((c) => c.day)),
  });
  return { slots, timezone: timeZone };
}

/** The free slots for an appointment type of the clinic. */
export async function availabilityForType(ctx: ServiceContext, clinicId: string, typeId: string, request: AvailabilityRequest) {
  assertDayRange(request.from, request.to);
  return findSlots(ctx, clinicId, appointmentTypeRecords.find(ctx, clinicId, typeId), request);
}

/** A slot as the API answers it: UTC instants with `Z`. */
export const slotView = (slot: Slot) => ({ start: rfc3339(new Date(slot.start)), end: rfc3339(new Date(slot.end)), vet_id: slot.vet_id, room_id: slot.room_id });
