import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { recordColumns, softDeleteColumn, timestampColumn } from "./columns";

export const CONSENT_CHANNELS = ["email", "whatsapp"] as const;
export type ConsentChannel = (typeof CONSENT_CHANNELS)[number];
export const CONSENT_PURPOSES = ["reminders", "marketing"] as const;
export type ConsentPurpose = (typeof CONSENT_PURPOSES)[number];
export const CONSENT_SOURCES = ["console", "booking", "reply", "link", "import"] as const;
export type ConsentSource = (typeof CONSENT_SOURCES)[number];

/**
 * What a tutor said about being contacted, one row per statement, never changed or deleted:
 * the latest row per (tutor, channel, purpose) decides.
 */
export const consentRecords = pgTable(
  "consent_records",
  {
    ...recordColumns(),
    tutor_id: uuid("tutor_id").notNull(),
    channel: text("channel").$type<ConsentChannel>().notNull(),
    purpose: text("purpose").$type<ConsentPurpose>().notNull(),
    granted: boolean("granted").notNull(),
    source: text("source").$type<ConsentSource>().notNull(),
    evidence: text("evidence"),
    recorded_at: timestampColumn("recorded_at").notNull(),
    /** The staff member who recorded it; null when the tutor did it (link, reply). */
    recorded_by: uuid("recorded_by"),
  },
  (t) => [
    index("consent_records_tutor_idx").on(t.clinic_id, t.tutor_id, t.recorded_at, t.id),
    check("consent_records_channel_check", sql`${t.channel} in ('email', 'whatsapp')`),
    check("consent_records_purpose_check", sql`${t.purpose} in ('reminders', 'marketing')`),
    check("consent_records_source_check", sql`${t.source} in ('console', 'booking', 'reply', 'link', 'import')`),
  ],
);

/**
 * The standing consent per (tutor, channel, purpose): the latest record's answer, kept beside the
 * history so the outbox checks it in the statement that sends. Its status changes are the
 * `consent.granted` / `consent.withdrawn` events.
 */
export const tutorConsents = pgTable(
  "tutor_consents",
  {
    ...recordColumns(),
    tutor_id: uuid("tutor_id").notNull(),
    channel: text("channel").$type<ConsentChannel>().notNull(),
    purpose: text("purpose").$type<ConsentPurpose>().notNull(),
    status: text("status").$type<"granted" | "withdrawn">().notNull(),
    source: text("source").$type<ConsentSource>().notNull(),
    recorded_at: timestampColumn("recorded_at").notNull(),
  },
  (t) => [
    uniqueIndex("tutor_consents_key").on(t.tutor_id, t.channel, t.purpose),
    check("tutor_consents_status_check", sql`${t.status} in ('granted', 'withdrawn')`),
  ],
);

export const REMINDER_KINDS = ["vaccination_due", "appointment", "follow_up"] as const;
export type ReminderKind = (typeof REMINDER_KINDS)[number];

/** When and how the clinic reminds tutors of one kind of thing. */
export const reminderRules = pgTable(
  "reminder_rules",
  {
    ...recordColumns(),
    kind: text("kind").$type<ReminderKind>().notNull(),
    name: text("name").notNull(),
    /** As given (`-7d`, `-24h`), and in minutes relative to the subject's moment. */
    offset: text("offset").notNull(),
    offset_minutes: integer("offset_minutes").notNull(),
    /** In order of preference: the first the tutor consented to is used. */
    channels: text("channels").array().notNull(),
    /** The e-mail's subject and text, with {tutor}, {patient}, {clinic}, {date}, {time} filled in. */
    email_subject: text("email_subject"),
    email_text: text("email_text"),
    /** The approved WhatsApp template, its language, and what fills its body parameters in order. */
    whatsapp_template: text("whatsapp_template"),
    whatsapp_language: text("whatsapp_language"),
    whatsapp_parameters: text("whatsapp_parameters").array().notNull().default(sql`'{}'::text[]`),
    /** Local times (HH:MM) between which nothing is sent; a message due inside waits for the end. */
    quiet_start: text("quiet_start").notNull().default("20:00"),
    quiet_end: text("quiet_end").notNull().default("09:00"),
    enabled: boolean("enabled").notNull().default(true),
    ...softDeleteColumn(),
  },
  (t) => [
    index("reminder_rules_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(sql`${t.deleted_at} is null`),
    index("reminder_rules_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("reminder_rules_kind_check", sql`${t.kind} in ('vaccination_due', 'appointment', 'follow_up')`),
  ],
);

export const REMINDER_STATES = ["queued", "sent", "delivered", "read", "failed", "suppressed"] as const;
export type ReminderState = (typeof REMINDER_STATES)[number];
export const SUPPRESSION_REASONS = ["dose_given", "appointment_cancelled", "appointment_moved", "patient_deceased", "consent_withdrawn", "tutor_blocked", "late", "no_address", "rule_disabled", "subject_gone"] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/**
 * The outbox: one message per (clinic, rule, subject, due moment, channel), ever. A dispatcher
 * claims a due row by setting `claimed_until` (a lease), so no two instances send it together.
 */
export const reminderMessages = pgTable(
  "reminder_messages",
  {
    ...recordColumns(),
    rule_id: uuid("rule_id").notNull(),
    kind: text("kind").$type<ReminderKind>().notNull(),
    /** The vaccination, visit or follow-up alert reminded of. */
    subject_id: uuid("subject_id").notNull(),
    patient_id: uuid("patient_id").notNull(),
    tutor_id: uuid("tutor_id").notNull(),
    channel: text("channel").$type<ConsentChannel>().notNull(),
    /** The subject's moment (the visit's start, the start of the due day) this message is about. */
    due_at: timestampColumn("due_at").notNull(),
    /** Past this the message would be late: it is suppressed instead. */
    expires_at: timestampColumn("expires_at").notNull(),
    /** When it should leave (the rule's offset, moved out of quiet hours); then each retry's time. */
    send_at: timestampColumn("send_at").notNull(),
    /** queued, then sent → delivered → read, or failed, or suppressed (with its reason). Named `status` so its changes are the event log's reminder.sent, reminder.failed…; the API calls it `state`. */
    status: text("status").$type<ReminderState>().notNull().default("queued"),
    suppressed_reason: text("suppressed_reason").$type<SuppressionReason>(),
    attempts: integer("attempts").notNull().default(0),
    claimed_until: timestampColumn("claimed_until"),
    /** Where it went (e-mail address or phone number) as it left. */
    recipient: text("recipient"),
    provider_message_id: text("provider_message_id"),
    /**
     * When the latest attempt was handed to the provider, written before the call: a message
     * reclaimed (after a kill) with it set is in doubt, as the provider may have accepted it; on a
     * sent message, sent_at − sending_at is how long the provider took to answer.
     */
    sending_at: timestampColumn("sending_at"),

    last_error: text("last_error"),
    sent_at: timestampColumn("sent_at"),
    delivered_at: timestampColumn("delivered_at"),
    read_at: timestampColumn("read_at"),
  },
  (t) => [
    uniqueIndex("reminder_messages_once_key").on(t.clinic_id, t.rule_id, t.subject_id, t.due_at, t.channel),
    index("reminder_messages_due_idx").on(t.send_at).where(sql`${t.status} = 'queued'`),
    index("reminder_messages_clinic_created_idx").on(t.clinic_id, t.created_at, t.id),
    index("reminder_messages_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    index("reminder_messages_patient_idx").on(t.clinic_id, t.patient_id, t.created_at),
    index("reminder_messages_tutor_idx").on(t.clinic_id, t.tutor_id, t.created_at),
    index("reminder_messages_provider_idx").on(t.provider_message_id),
    check("reminder_messages_status_check", sql`${t.status} in ('queued', 'sent', 'delivered', 'read', 'failed', 'suppressed')`),
  ],
);
