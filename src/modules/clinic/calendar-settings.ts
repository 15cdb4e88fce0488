import { eq } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { isUniqueViolation } from "../../db/client";
import { calendarSettings, clinics, type WeeklyInterval } from "../../db/schema";
import { AppError, type FieldError } from "../../lib/errors";
import { minutesOfDay, rfc3339 } from "../../lib/time";

/** Opening hours of a clinic that has not set its own: Monday–Friday 09:00–19:00, Saturday 10:00–14:00. */
export const DEFAULT_OPENING_HOURS: WeeklyInterval[] = [
  ...[1, 2, 3, 4, 5].map((weekday) => ({ weekday, start: "09:00", end: "19:00" })),
  { weekday: 6, start: "10:00", end: "14:00" },
];

export interface CalendarSettings {
  slug: string | null;
  opening_hours: WeeklyInterval[];
  auto_confirm_online_bookings: boolean;
  cancellation_window_minutes: number;
  slot_step_minutes: number | null;
  show_vet_names_online: boolean;
  updated_at: string | null;
}

export type CalendarSettingsInput = Partial<Omit<CalendarSettings, "updated_at">>;

export async function getCalendarSettings(ctx: Pick<ServiceContext, "db">, clinicId: string): Promise<CalendarSettings> {
  const [row] = await ctx.db.select().from(calendarSettings).where(eq(calendarSettings.clinic_id, clinicId));
  return {
    slug: row?.slug ?? null,
    opening_hours: row?.opening_hours ?? DEFAULT_OPENING_HOURS,
    auto_confirm_online_bookings: row?.auto_confirm_online_bookings ?? false,
    cancellation_window_minutes: row?.cancellation_window_minutes ?? 1440,
    slot_step_minutes: row?.slot_step_minutes ?? null,
    show_vet_names_online: row?.show_vet_names_online ?? false,
    updated_at: row ? rfc3339(row.updated_at) : null,
  };
}

/**
 * Weekly intervals: ISO weekdays 1–7, "HH:MM" times with the end after the start (24:00 is the
 * end of the day), no two intervals of one day overlapping. Returns each refused value.
 */
export function weeklyIntervalProblems(intervals: WeeklyInterval[], path: string): FieldError[] {
  const fields: FieldError[] = [];
  intervals.forEach((interval, i) => {
    const start = minutesOfDay(interval.start);
    const end = minutesOfDay(interval.end);
    if (start === null || start >= 24 * 60) fields.push({ path: `${path}/${i}/start`, message: "Expected a time HH:MM from 00:00 to 23:59" });
    if (end === null) fields.push({ path: `${path}/${i}/end`, message: "Expected a time HH:MM from 00:01 to 24:00" });
    else if (start !== null && end <= start) fields.push({ path: `${path}/${i}/end`, message: "Must be after start" });
  });
  if (fields.length) return fields;
  const sorted = [...intervals].sort((a, b) => a.weekday - b.weekday || a.start.localeCompare(b.start));
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.weekday === sorted[i - 1]!.weekday && sorted[i]!.start < sorted[i - 1]!.end) fields.push({ path, message: `Intervals of weekday ${sorted[i]!.weekday} overlap` });
  }
  return fields;
}

/** The owner's calendar settings; the slug is unique across clinics (409 when taken). */
export async function updateCalendarSettings(ctx: ServiceContext, clinicId: string, input: CalendarSettingsInput): Promise<CalendarSettings> {
  const fields = input.opening_hours ? weeklyIntervalProblems(input.opening_hours, "body.opening_hours") : [];
  if (fields.length) throw AppError.validation(fields);
  const [clinic] = await ctx.db.select({ id: clinics.id }).from(clinics).where(eq(clinics.id, clinicId));
  if (!clinic) throw AppError.notFound("Clinic");
  const values = { ...input, slug: input.slug === undefined ? undefined : input.slug?.toLowerCase() ?? null, updated_at: ctx.clock.now() };
  try {
    await ctx.db
      .insert(calendarSettings)
      .values({ clinic_id: clinicId, ...values })
      .onConflictDoUpdate({ target: calendarSettings.clinic_id, set: values });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError("CONFLICT", "Another clinic already uses this slug", { reason: "slug_taken" });
    throw error;
  }
  return getCalendarSettings(ctx, clinicId);
}
