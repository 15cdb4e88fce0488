import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { clinicRecords, recordView } from "../../db/clinic-records";
import type { PageRequest } from "../../db/keyset";
import { clinicClosures, timeOff, workingHours, type Role, type WeeklyInterval } from "../../db/schema";
import { AppError } from "../../lib/errors";
import { getCalendarSettings, weeklyIntervalProblems } from "../clinic/calendar-settings";
import { userRecords } from "../users/service";

export const timeOffRecords = clinicRecords(timeOff, "Time off");
export const closureRecords = clinicRecords(clinicClosures, "Closure");
export const timeOffView = (row: typeof timeOff.$inferSelect) => recordView(row);
export const closureView = (row: typeof clinicClosures.$inferSelect) => recordView(row);

/** The owner manages everyone's schedule; a vet or staff member only their own. */
export function assertMayManage(actor: { userId: string; role: Role }, userId: string) {
  if (actor.role !== "owner" && actor.userId !== userId) throw new AppError("FORBIDDEN", "Only the owner manages another person's schedule");
}

export async function getWorkingHours(ctx: ServiceContext, clinicId: string, userId: string) {
  await userRecords.find(ctx, clinicId, userId);
  const [row] = await ctx.db.select().from(workingHours).where(and(eq(workingHours.clinic_id, clinicId), eq(workingHours.user_id, userId)));
  if (row) return { user_id: userId, intervals: row.intervals, source: "own" as const };
  return { user_id: userId, intervals: (await getCalendarSettings(ctx, clinicId)).opening_hours, source: "clinic_opening_hours" as const };
}

/** Replaces the person's weekly hours (an empty list: not working). */
export async function putWorkingHours(ctx: ServiceContext, clinicId: string, userId: string, intervals: WeeklyInterval[]) {
  await userRecords.find(ctx, clinicId, userId);
  const fields = weeklyIntervalProblems(intervals, "body.intervals");
  if (fields.length) throw AppError.validation(fields);
  const sorted = [...intervals].sort((a, b) => a.weekday - b.weekday || a.start.localeCompare(b.start));
  const now = ctx.clock.now();
  await ctx.db
    .insert(workingHours)
    .values({ clinic_id: clinicId, user_id: userId, intervals: sorted, updated_at: now })
    .onConflictDoUpdate({ target: [workingHours.clinic_id, workingHours.user_id], set: { intervals: sorted, updated_at: now } });
  return { user_id: userId, intervals: sorted, source: "own" as const };
}

export async function addTimeOff(ctx: ServiceContext, clinicId: string, userId: string, input: { starts_at: string; ends_at: string; reason?: string | null }) {
  await userRecords.find(ctx, clinicId, userId);
  const startsAt = new Date(input.starts_at);
  const endsAt = new Date(input.ends_at);
  if (endsAt <= startsAt) throw AppError.validation([{ path: "body.ends_at", message: "Must be after starts_at" }]);
  return timeOffView(await timeOffRecords.insert(ctx, clinicId, { user_id: userId, starts_at: startsAt, ends_at: endsAt, reason: input.reason ?? null }));
}

export async function listTimeOff(ctx: ServiceContext, clinicId: string, userId: string, page: PageRequest) {
  await userRecords.find(ctx, clinicId, userId);
  return timeOffRecords.page(ctx, clinicId, [eq(timeOff.user_id, userId)], page);
}

/** Delta sync of a person's time off: changed after an instant, removed entries included. */
export async function timeOffChanges(ctx: ServiceContext, clinicId: string, userId: string, since: Date, page: PageRequest) {
  await userRecords.find(ctx, clinicId, userId);
  return timeOffRecords.changedSince(ctx, clinicId, since, page, [eq(timeOff.user_id, userId)]);
}

export async function removeTimeOff(ctx: ServiceContext, clinicId: string, userId: string, id: string) {
  const row = await timeOffRecords.find(ctx, clinicId, id);
  if (row.user_id !== userId) throw AppError.notFound("Time off", id);
  await timeOffRecords.softDelete(ctx, clinicId, id);
}

/** A closed day; the same day twice is 409. */
export async function addClosure(ctx: ServiceContext, clinicId: string, input: { day: string; reason?: string | null }) {
  const [existing] = await closureRecords.page(ctx, clinicId, [eq(clinicClosures.day, input.day)], { kind: "offset", limit: 1, offset: 0 }).then((p) => p.rows);
  if (existing) throw new AppError("CONFLICT", `The clinic is already closed on ${input.day}`, { reason: "already_closed", closure_id: existing.id });
  return closureView(await closureRecords.insert(ctx, clinicId, { day: input.day, reason: input.reason ?? null }));
}

export const listClosures = (ctx: ServiceContext, clinicId: string, page: PageRequest) => closureRecords.page(ctx, clinicId, [], page);
/** Delta sync of the closed days: changed after an instant, reopened ones included. */
export const closureChanges = (ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) => closureRecords.changedSince(ctx, clinicId, since, page);
export const removeClosure = (ctx: ServiceContext, clinicId: string, id: string) => closureRecords.softDelete(ctx, clinicId, id);
