import { sql } from "drizzle-orm";
import { check, date, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { recordColumns, softDeleteColumn, timestampColumn } from "./columns";

const live = (t: { deleted_at: unknown }) => sql`${t.deleted_at} is null`;

export const tutors = pgTable(
  "tutors",
  {
    ...recordColumns(),
    name: text("name").notNull(),
    email: text("email"),
    phone: text("phone"),
    national_id: text("national_id"),
    address: text("address"),
    notes: text("notes"),
    /** Erased on the tutor's request: personal data pseudonymised, what the law keeps is blocked (no messages, hidden from lists). */
    blocked_at: timestampColumn("blocked_at"),
    ...softDeleteColumn(),
  },
  (t) => [
    index("tutors_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("tutors_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    // Search is accent- and case-insensitive: trigrams over fold_name(name) (migration 0005 defines
    // it), keyed by the clinic too (btree_gin), so a search reads only its clinic's matches.
    // Without fastupdate: a GIN pending list is only merged by VACUUM, which the embedded database
    // never runs, and a search scans all of it; names change rarely, so each write merges its own.
    index("tutors_clinic_name_trgm_idx").using("gin", t.clinic_id, sql`fold_name(${t.name}) gin_trgm_ops`).with({ fastupdate: false }).where(live(t)),
  ],
);

export const SPECIES = ["dog", "cat", "bird", "rabbit", "rodent", "reptile", "horse", "other"] as const;
export const SEXES = ["male", "female", "unknown"] as const;

export const patients = pgTable(
  "patients",
  {
    ...recordColumns(),
    tutor_id: uuid("tutor_id").notNull(),
    name: text("name").notNull(),
    species: text("species").notNull(),
    breed: text("breed"),
    sex: text("sex"),
    birth_date: date("birth_date", { mode: "string" }),
    weight_grams: integer("weight_grams"),
    microchip: text("microchip"),
    /** The day the patient died: it ends every reminder about it. */
    deceased_on: date("deceased_on", { mode: "string" }),
    ...softDeleteColumn(),
  },
  (t) => [
    index("patients_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("patients_clinic_tutor_idx").on(t.clinic_id, t.tutor_id, t.created_at, t.id).where(live(t)),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("patients_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    index("patients_clinic_name_trgm_idx").using("gin", t.clinic_id, sql`fold_name(${t.name}) gin_trgm_ops`).with({ fastupdate: false }).where(live(t)),
  ],
);

export const VISIT_STATUSES = ["requested", "scheduled", "in_progress", "completed", "cancelled", "no_show"] as const;
export type VisitStatus = (typeof VISIT_STATUSES)[number];
/** Statuses whose visit no longer holds its time: the vet and the room are free again. */
export const RELEASED_VISIT_STATUSES = ["cancelled", "no_show"] as const satisfies readonly VisitStatus[];

export const visits = pgTable(
  "visits",
  {
    ...recordColumns(),
    patient_id: uuid("patient_id").notNull(),
    vet_id: uuid("vet_id"),
    status: text("status").$type<VisitStatus>().notNull().default("scheduled"),
    scheduled_at: timestampColumn("scheduled_at").notNull(),
    /**
     * When the visit ends. An insert that leaves it out gets scheduled_at + 30 minutes from the
     * visits_default_ends_at trigger (a column default cannot read another column).
     */
    ends_at: timestampColumn("ends_at")
      .notNull()
      .$defaultFn(() => sql`default`),
    appointment_type_id: uuid("appointment_type_id"),
    room_id: uuid("room_id"),
    /** The type's buffers when the visit was booked: the vet and the room are held this much longer on each side. */
    buffer_before_minutes: integer("buffer_before_minutes").notNull().default(0),
    buffer_after_minutes: integer("buffer_after_minutes").notNull().default(0),
    /** Bumped on every change (the iCalendar SEQUENCE). */
    revision: integer("revision").notNull().default(0),
    started_at: timestampColumn("started_at"),
    completed_at: timestampColumn("completed_at"),
    reason: text("reason"),
    diagnosis: text("diagnosis"),
    notes: text("notes"),
    /** When the tutor confirmed attendance (the reminder's link). */
    confirmed_at: timestampColumn("confirmed_at"),
    ...softDeleteColumn(),
  },
  (t) => [
    index("visits_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("visits_clinic_scheduled_idx").on(t.clinic_id, t.scheduled_at, t.id).where(live(t)),
    // Deleted visits too: the timeline finds a patient's invoices through its visits, whatever became of them.
    index("visits_clinic_patient_idx").on(t.clinic_id, t.patient_id, t.created_at, t.id),
    index("visits_clinic_vet_scheduled_idx").on(t.clinic_id, t.vet_id, t.scheduled_at, t.id).where(live(t)),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("visits_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),

    check(
      "visits_status_check",
      sql`${t.status} in ('requested', 'scheduled', 'in_progress', 'completed', 'cancelled', 'no_show')`,
    ),
    check("visits_ends_after_start_check", sql`${t.ends_at} > ${t.scheduled_at}`),
    check("visits_buffers_check", sql`${t.buffer_before_minutes} between 0 and 1440 and ${t.buffer_after_minutes} between 0 and 1440`),
    index("visits_clinic_room_scheduled_idx").on(t.clinic_id, t.room_id, t.scheduled_at).where(sql`${t.deleted_at} is null and ${t.room_id} is not null`),
    // The exclusion constraints on vet and room time are in their migration (drizzle cannot express them).
  ],
);

export const ALERT_KINDS = ["vaccine_due", "follow_up", "allergy", "overdue_invoice", "custom"] as const;
export const ALERT_STATUSES = ["active", "resolved"] as const;

export const alerts = pgTable(
  "alerts",
  {
    ...recordColumns(),
    patient_id: uuid("patient_id"),
    kind: text("kind").notNull(),
    message: text("message").notNull(),
    status: text("status").notNull().default("active"),
    due_date: date("due_date", { mode: "string" }),
    resolved_at: timestampColumn("resolved_at"),
    ...softDeleteColumn(),
  },
  (t) => [
    index("alerts_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("alerts_clinic_status_idx").on(t.clinic_id, t.status, t.created_at, t.id).where(live(t)),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("alerts_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),

    check(
      "alerts_kind_check",
      sql`${t.kind} in ('vaccine_due', 'follow_up', 'allergy', 'overdue_invoice', 'custom')`,
    ),
    check("alerts_status_check", sql`${t.status} in ('active', 'resolved')`),
  ],
);
