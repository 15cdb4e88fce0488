import { sql } from "drizzle-orm";
import { boolean, check, date, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { recordColumns, softDeleteColumn, timestampColumn } from "./columns";

// What the clinic's calendar is made of: appointment types, rooms, the vets' weekly hours, their
// time off, the days the clinic is closed, and the clinic's booking settings.

const live = (t: { deleted_at: unknown }) => sql`${t.deleted_at} is null`;

/** One interval of a week in the clinic's local time: ISO weekday 1 (Monday)–7, "HH:MM" to "HH:MM". */
export interface WeeklyInterval {
  weekday: number;
  start: string;
  end: string;
}

/** What can be booked: its length, its buffers, who can do it and whether tutors can book it online. */
export const appointmentTypes = pgTable(
  "appointment_types",
  {
    ...recordColumns(),
    name: text("name").notNull(),
    duration_minutes: integer("duration_minutes").notNull(),
    buffer_before_minutes: integer("buffer_before_minutes").notNull().default(0),
    buffer_after_minutes: integer("buffer_after_minutes").notNull().default(0),
    /** Species it is for; empty = any. */
    species: text("species").array().notNull().default(sql`'{}'::text[]`),
    /** Vets who can do it; empty = every vet. */
    vet_ids: uuid("vet_ids").array().notNull().default(sql`'{}'::uuid[]`),
    room_required: boolean("room_required").notNull().default(false),
    bookable_online: boolean("bookable_online").notNull().default(false),
    min_notice_minutes: integer("min_notice_minutes").notNull().default(0),
    max_advance_days: integer("max_advance_days").notNull().default(90),
    ...softDeleteColumn(),
  },
  (t) => [
    index("appointment_types_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    // Delta sync returns deleted rows too, in the order of their last change.
    index("appointment_types_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("appointment_types_duration_check", sql`${t.duration_minutes} between 5 and 1440`),
  ],
);

export const rooms = pgTable(
  "rooms",
  {
    ...recordColumns(),
    name: text("name").notNull(),
    ...softDeleteColumn(),
  },
  (t) => [index("rooms_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)), index("rooms_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id)],
);

/** A vet's weekly hours; a vet without a row works the clinic's opening hours. */
export const workingHours = pgTable(
  "working_hours",
  {
    clinic_id: uuid("clinic_id").notNull(),
    user_id: uuid("user_id").notNull(),
    intervals: jsonb("intervals").$type<WeeklyInterval[]>().notNull(),
    updated_at: timestampColumn("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clinic_id, t.user_id] })],
);

export const timeOff = pgTable(
  "time_off",
  {
    ...recordColumns(),
    user_id: uuid("user_id").notNull(),
    starts_at: timestampColumn("starts_at").notNull(),
    ends_at: timestampColumn("ends_at").notNull(),
    reason: text("reason"),
    ...softDeleteColumn(),
  },
  (t) => [
    index("time_off_clinic_user_idx").on(t.clinic_id, t.user_id, t.starts_at).where(live(t)),
    index("time_off_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("time_off_ends_after_start_check", sql`${t.ends_at} > ${t.starts_at}`),
  ],
);

/** A whole day the clinic is closed (a holiday, an inventory day). */
export const clinicClosures = pgTable(
  "clinic_closures",
  {
    ...recordColumns(),
    day: date("day", { mode: "string" }).notNull(),
    reason: text("reason"),
    ...softDeleteColumn(),
  },
  (t) => [uniqueIndex("clinic_closures_clinic_day_key").on(t.clinic_id, t.day).where(live(t)), index("clinic_closures_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id)],
);

/** The clinic's calendar and online-booking settings; a clinic without a row has the defaults. */
export const calendarSettings = pgTable(
  "calendar_settings",
  {
    clinic_id: uuid("clinic_id").primaryKey(),
    /** The public booking address (/book/{slug}); null = online booking off. */
    slug: text("slug"),
    opening_hours: jsonb("opening_hours").$type<WeeklyInterval[]>(),
    auto_confirm_online_bookings: boolean("auto_confirm_online_bookings").notNull().default(false),
    /** How long before its start a tutor may still cancel or move a booking. */
    cancellation_window_minutes: integer("cancellation_window_minutes").notNull().default(1440),
    /** Slots start this many minutes apart; null = the appointment type's duration. */
    slot_step_minutes: integer("slot_step_minutes"),
    show_vet_names_online: boolean("show_vet_names_online").notNull().default(false),
    updated_at: timestampColumn("updated_at").notNull(),
  },
  (t) => [uniqueIndex("calendar_settings_slug_key").on(t.slug)],
);

/** A vet's secret iCalendar feed address (only its SHA-256 is kept). */
export const calendarFeeds = pgTable("calendar_feeds", {
  clinic_id: uuid("clinic_id").notNull(),
  user_id: uuid("user_id").primaryKey(),
  token_hash: text("token_hash").notNull().unique(),
  created_at: timestampColumn("created_at").notNull(),
});
