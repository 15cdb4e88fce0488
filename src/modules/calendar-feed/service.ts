import { and, asc, eq, gte, isNull, lt } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { appointmentTypes, calendarFeeds, clinics, patients, rooms, users, visits, type VisitStatus } from "../../db/schema";
import { rfc3339 } from "../../lib/time";
import { randomToken, sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { userRecords } from "../users/service";
import { escapeText, serialize, utcDateTime } from "./ical";

const DAY = 86_400_000;
/** The feed holds the visits that start from 30 days ago up to 180 days ahead. */
export const FEED_DAYS_BACK = 30;
export const FEED_DAYS_AHEAD = 180;
/** Where the feed is served under /api/v1; the token follows, then `.ics`. */
export const FEED_PATH = "/calendar/";

/** Whether the person has a feed, and since when (the address itself is shown once, at creation). */
export async function feedStatus(ctx: ServiceContext, clinicId: string, userId: string) {
  await userRecords.find(ctx, clinicId, userId);
  const [row] = await ctx.db.select({ created_at: calendarFeeds.created_at }).from(calendarFeeds).where(and(eq(calendarFeeds.clinic_id, clinicId), eq(calendarFeeds.user_id, userId)));
  return { active: !!row, created_at: row ? rfc3339(row.created_at) : null };
}

/**
 * A new secret address for the person's feed. One feed per person: a new one replaces the old,
 * whose address stops working at once. Only the token's SHA-256 is kept, so the address is
 * answered here and never again.
 */
export async function createFeed(ctx: ServiceContext, clinicId: string, userId: string, origin: string) {
  await userRecords.find(ctx, clinicId, userId);
  const token = randomToken(32);
  const now = ctx.clock.now();
  await ctx.db
    .insert(calendarFeeds)
    .values({ clinic_id: clinicId, user_id: userId, token_hash: sha256Hex(token), created_at: now })
    .onConflictDoUpdate({ target: calendarFeeds.user_id, set: { clinic_id: clinicId, token_hash: sha256Hex(token), created_at: now } });
  const url = `${origin}/api/v1${FEED_PATH}${token}.ics`;
  return { url, webcal_url: url.replace(/^https?:/, "webcal:"), created_at: rfc3339(now) };
}

/** Turns the feed off: its address answers 404 from now on. */
export async function revokeFeed(ctx: ServiceContext, clinicId: string, userId: string) {
  await userRecords.find(ctx, clinicId, userId);
  await ctx.db.delete(calendarFeeds).where(and(eq(calendarFeeds.clinic_id, clinicId), eq(calendarFeeds.user_id, userId)));
}

/** requested: not yet accepted by the clinic; cancelled: the time is free again. A no-show held its time. */
const EVENT_STATUS: Record<VisitStatus, string> = {
  requested: "TENTATIVE",
  scheduled: "CONFIRMED",
  in_progress: "CONFIRMED",
  completed: "CONFIRMED",
  no_show: "CONFIRMED",
  cancelled: "CANCELLED",
};

const NO_FEED = () => new AppError("NOT_FOUND", "No calendar feed at this address");

/**
 * The person's visits as an iCalendar object (RFC 5545), found by the feed's token; an unknown or
 * replaced token, or a person no longer in the clinic, is 404. Personal data is kept to what a
 * vet's phone calendar needs: the patient's name and the appointment type (no tutor, no reason,
 * no clinical notes), the room as the location.
 */
export async function feedCalendar(ctx: ServiceContext, token: string): Promise<string> {
  const [feed] = await ctx.db
    .select({ clinic_id: calendarFeeds.clinic_id, user_id: calendarFeeds.user_id, person: users.name, clinic: clinics.name })
    .from(calendarFeeds)
    .innerJoin(users, and(eq(users.id, calendarFeeds.user_id), eq(users.clinic_id, calendarFeeds.clinic_id), isNull(users.deleted_at)))
    .innerJoin(clinics, eq(clinics.id, calendarFeeds.clinic_id))
    .where(eq(calendarFeeds.token_hash, sha256Hex(token)));
  if (!feed) throw NO_FEED();
  const now = ctx.clock.now().getTime();
  const rows = await ctx.db
    .select({
      id: visits.id,
      status: visits.status,
      scheduled_at: visits.scheduled_at,
      ends_at: visits.ends_at,
      revision: visits.revision,
      created_at: visits.created_at,
      updated_at: visits.updated_at,
      patient: patients.name,
      type: appointmentTypes.name,
      room: rooms.name,
    })
    .from(visits)
    .innerJoin(patients, and(eq(patients.id, visits.patient_id), eq(patients.clinic_id, visits.clinic_id)))
    .leftJoin(appointmentTypes, and(eq(appointmentTypes.id, visits.appointment_type_id), eq(appointmentTypes.clinic_id, visits.clinic_id)))
    .leftJoin(rooms, and(eq(rooms.id, visits.room_id), eq(rooms.clinic_id, visits.clinic_id)))
    .where(
      and(
        eq(visits.clinic_id, feed.clinic_id),
        eq(visits.vet_id, feed.user_id),
        isNull(visits.deleted_at),
        gte(visits.scheduled_at, new Date(now - FEED_DAYS_BACK * DAY)),
        lt(visits.scheduled_at, new Date(now + FEED_DAYS_AHEAD * DAY)),
      ),
    )
    .orderBy(asc(visits.scheduled_at), asc(visits.id));

  const lines: [string, string][] = [
    ["BEGIN", "VCALENDAR"],
    ["VERSION", "2.0"],
    ["PRODID", "-//vet-clinic-service//calendar feed//ES"],
    ["CALSCALE", "GREGORIAN"],
    ["X-WR-CALNAME", escapeText(`${feed.clinic} · ${feed.person}`)],
    // A hint to clients that poll: every 15 minutes.
    ["REFRESH-INTERVAL;VALUE=DURATION", "PT15M"],
    ["X-PUBLISHED-TTL", "PT15M"],
  ];
  for (const row of rows) {
    lines.push(
      ["BEGIN", "VEVENT"],
      ["UID", `${row.id}@vet-clinic-service`],
      // Without METHOD, DTSTAMP is when the event last changed in the store (RFC 5545 §3.8.7.2).
      ["DTSTAMP", utcDateTime(row.updated_at)],
      ["CREATED", utcDateTime(row.created_at)],
      ["LAST-MODIFIED", utcDateTime(row.updated_at)],
      ["SEQUENCE", String(row.revision)],
      ["DTSTART", utcDateTime(row.scheduled_at)],
      ["DTEND", utcDateTime(row.ends_at)],
      ["SUMMARY", escapeText(row.type ? `${row.patient} · ${row.type}` : row.patient)],
      ["STATUS", EVENT_STATUS[row.status]],
      // A cancelled visit leaves the vet free.
      ["TRANSP", row.status === "cancelled" ? "TRANSPARENT" : "OPAQUE"],
    );
    if (row.room) lines.push(["LOCATION", escapeText(row.room)]);
    lines.push(["END", "VEVENT"]);
  }
  lines.push(["END", "VCALENDAR"]);
  return serialize(lines);
}
