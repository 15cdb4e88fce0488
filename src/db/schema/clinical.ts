import { sql } from "drizzle-orm";
import { check, date, index, integer, pgTable, pgView, text, uuid } from "drizzle-orm/pg-core";
import { recordColumns, softDeleteColumn, timestampColumn } from "./columns";

// The clinical record. Nothing here is ever deleted: `deleted_at` exists so the shared record
// reads (live rows of a clinic) apply, but only a draft note is ever soft-deleted; signed notes,
// addenda, vitals, vaccinations and prescriptions have no delete at all.

const live = (t: { deleted_at: unknown }) => sql`${t.deleted_at} is null`;

/** A consultation note (SOAP) on a visit: a draft until signed, then final (corrections are addenda). */
export const clinicalNotes = pgTable(
  "clinical_notes",
  {
    ...recordColumns(),
    visit_id: uuid("visit_id").notNull(),
    patient_id: uuid("patient_id").notNull(),
    author_id: uuid("author_id").notNull(),
    subjective: text("subjective"),
    objective: text("objective"),
    assessment: text("assessment"),
    plan: text("plan"),
    diagnoses: text("diagnoses").array().notNull().default(sql`'{}'::text[]`),
    signed_at: timestampColumn("signed_at"),
    signed_by: uuid("signed_by"),
    ...softDeleteColumn(),
  },
  (t) => [
    // Deleted ones too: delta sync reads a visit's records, deleted ones included, through it.
    index("clinical_notes_clinic_visit_idx").on(t.clinic_id, t.visit_id, t.created_at, t.id),
    index("clinical_notes_clinic_patient_idx").on(t.clinic_id, t.patient_id, t.created_at, t.id).where(live(t)),
    // A signed note is whole: both marks or neither, and it is never deleted.
    check("clinical_notes_signed_check", sql`(${t.signed_at} is null) = (${t.signed_by} is null)`),
    check("clinical_notes_signed_kept_check", sql`${t.signed_at} is null or ${t.deleted_at} is null`),
  ],
);

/** A correction or addition to a signed note: written once, never edited. */
export const noteAddenda = pgTable(
  "note_addenda",
  {
    ...recordColumns(),
    note_id: uuid("note_id").notNull(),
    patient_id: uuid("patient_id").notNull(),
    author_id: uuid("author_id").notNull(),
    text: text("text").notNull(),
    ...softDeleteColumn(),
  },
  (t) => [index("note_addenda_clinic_note_idx").on(t.clinic_id, t.note_id, t.created_at, t.id).where(live(t))],
);

/** One measurement of a patient; every measure optional, at least one present. */
export const vitals = pgTable(
  "vitals",
  {
    ...recordColumns(),
    patient_id: uuid("patient_id").notNull(),
    visit_id: uuid("visit_id"),
    recorded_by: uuid("recorded_by"),
    measured_at: timestampColumn("measured_at").notNull(),
    weight_grams: integer("weight_grams"),
    /** Tenths of a degree Celsius (385 = 38.5 °C). */
    temperature_dc: integer("temperature_dc"),
    heart_rate_bpm: integer("heart_rate_bpm"),
    respiratory_rate_bpm: integer("respiratory_rate_bpm"),
    body_condition_score: integer("body_condition_score"),
    ...softDeleteColumn(),
  },
  (t) => [
    // Deleted ones too: delta sync reads a patient's records, deleted ones included, through it.
    index("vitals_clinic_patient_idx").on(t.clinic_id, t.patient_id, t.created_at, t.id),
    index("vitals_clinic_patient_measured_idx").on(t.clinic_id, t.patient_id, t.measured_at, t.id).where(live(t)),
    check(
      "vitals_some_measure_check",
      sql`num_nonnulls(${t.weight_grams}, ${t.temperature_dc}, ${t.heart_rate_bpm}, ${t.respiratory_rate_bpm}, ${t.body_condition_score}) > 0`,
    ),
  ],
);

export const REMINDER_STATUSES = ["pending", "contacted", "booked", "declined"] as const;
export type ReminderStatus = (typeof REMINDER_STATUSES)[number];

/**
 * A vaccination: a dose given (`given_at`), with the date the next one is due. A row without a
 * dose (`given_at` null) is a due item alone, as the vaccine reminders of older versions become.
 * A later dose for the same disease closes the earlier due date (`due_closed_at`, `due_closed_by`).
 */
export const vaccinations = pgTable(
  "vaccinations",
  {
    ...recordColumns(),
    patient_id: uuid("patient_id").notNull(),
    visit_id: uuid("visit_id"),
    vaccine: text("vaccine").notNull(),
    diseases: text("diseases").array().notNull().default(sql`'{}'::text[]`),
    lot: text("lot"),
    lot_expires_on: date("lot_expires_on", { mode: "string" }),
    given_at: timestampColumn("given_at"),
    given_by: uuid("given_by"),
    next_due_on: date("next_due_on", { mode: "string" }),
    reminder_status: text("reminder_status").$type<ReminderStatus>().notNull().default("pending"),
    reminder_updated_at: timestampColumn("reminder_updated_at"),
    due_closed_at: timestampColumn("due_closed_at"),
    due_closed_by: uuid("due_closed_by"),
    ...softDeleteColumn(),
  },
  (t) => [
    // Deleted ones too: delta sync reads a patient's records, deleted ones included, through it.
    index("vaccinations_clinic_patient_idx").on(t.clinic_id, t.patient_id, t.created_at, t.id),
    // The due list: open due dates of the clinic in date order.
    index("vaccinations_clinic_due_idx").on(t.clinic_id, t.next_due_on, t.id).where(sql`${t.deleted_at} is null and ${t.due_closed_at} is null and ${t.next_due_on} is not null`),
    check("vaccinations_reminder_status_check", sql`${t.reminder_status} in ('pending', 'contacted', 'booked', 'declined')`),
  ],
);

/** A prescription: issued once, never edited; cancelled with a reason. */
export const prescriptions = pgTable(
  "prescriptions",
  {
    ...recordColumns(),
    patient_id: uuid("patient_id").notNull(),
    visit_id: uuid("visit_id"),
    prescribed_by: uuid("prescribed_by").notNull(),
    drug: text("drug").notNull(),
    dose: text("dose").notNull(),
    route: text("route").notNull(),
    frequency: text("frequency").notNull(),
    duration_days: integer("duration_days"),
    quantity: text("quantity"),
    instructions: text("instructions"),
    cancelled_at: timestampColumn("cancelled_at"),
    cancelled_by: uuid("cancelled_by"),
    cancel_reason: text("cancel_reason"),
    ...softDeleteColumn(),
  },
  (t) => [
    // Deleted ones too: delta sync reads a patient's records, deleted ones included, through it.
    index("prescriptions_clinic_patient_idx").on(t.clinic_id, t.patient_id, t.created_at, t.id),
    check("prescriptions_cancel_check", sql`(${t.cancelled_at} is null) = (${t.cancel_reason} is null)`),
  ],
);

export const TIMELINE_KINDS = ["visit", "note", "addendum", "vitals", "vaccination", "prescription", "invoice", "reminder"] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/**
 * A patient's timeline: one row per visit, signed note, addendum, vitals, vaccination,
 * prescription, invoice and reminder message sent (or not sent: suppressed, failed), at the moment
 * it happened. The view is defined in its migration
 * (drizzle-kit leaves `.existing()` views alone); lists page over it like over a table.
 */
export const patientTimeline = pgView("patient_timeline", {
  clinic_id: uuid("clinic_id").notNull(),
  patient_id: uuid("patient_id").notNull(),
  at: timestampColumn("at").notNull(),
  kind: text("kind").$type<TimelineKind>().notNull(),
  id: uuid("id").notNull(),
}).existing();
