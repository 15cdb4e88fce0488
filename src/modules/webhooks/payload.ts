import { rfc3339 } from "../../lib/time";
import { changedFieldNames, eventNewValues, type StoredEventFields } from "../audit/changes";

/**
 * What a webhook receiver is told, per kind of record: besides ids, the event type and the names
 * of the fields that changed, only these fields' values (when the event carries them: every set
 * field on creation, the changed ones on an update). Free text (notes, reasons, messages,
 * addresses, descriptions) and personal data (names, e-mails, phones, national ids) stay out: a
 * receiver that needs them fetches the record through the API with the id it was given.
 * A kind of record missing here sends ids and changed field names only.
 */
export const WEBHOOK_FIELDS: Record<string, readonly string[]> = {
  clinic: ["timezone", "currency", "plan"],
  user: ["role"],
  tutor: [],
  patient: ["tutor_id", "species"],
  visit: ["patient_id", "vet_id", "status", "scheduled_at", "ends_at", "appointment_type_id", "room_id", "started_at", "completed_at"],
  alert: ["patient_id", "kind", "status", "due_date", "resolved_at"],
  invoice: ["tutor_id", "visit_id", "status", "currency", "net_amount", "tax_amount", "total_amount", "paid_amount", "emitted_at", "paid_at", "voided_at"],
  payment: ["invoice_id", "amount", "currency", "method", "paid_at", "refunded_amount"],
  refund: ["payment_id", "invoice_id", "amount", "currency", "refunded_at"],
  tax_document: ["invoice_id", "doc_type", "folio", "referenced_document_id", "currency", "net_amount", "tax_amount", "total_amount", "issued_at", "environment", "sent_at", "track_id", "sii_status"],
  mcp_key: ["scopes", "rate_limit_per_day", "expires_at", "revoked_at", "created_by"],
  mcp_report: ["name", "version", "scope", "created_by"],
  mcp_connection: ["client_id", "scopes", "rate_limit_per_day", "created_by", "revoked_at"],
  note: ["visit_id", "patient_id", "author_id", "signed_at", "signed_by"],
  note_addendum: ["note_id", "patient_id", "author_id"],
  vitals: ["patient_id", "visit_id", "recorded_by", "measured_at"],
  vaccination: ["patient_id", "visit_id", "vaccine", "given_at", "given_by", "next_due_on", "reminder_status", "due_closed_at"],
  prescription: ["patient_id", "visit_id", "prescribed_by", "drug", "cancelled_at", "cancelled_by"],
  sii_caf: ["doc_type", "range_from", "range_to", "expires_on", "environment"],
  sii_certificate: ["valid_from", "valid_to"],
  webhook: ["events", "enabled"],
  appointment_type: ["duration_minutes", "buffer_before_minutes", "buffer_after_minutes", "species", "vet_ids", "room_required", "bookable_online", "min_notice_minutes", "max_advance_days", "deleted_at"],
  room: ["deleted_at"],
  working_hours: ["user_id"],
  time_off: ["user_id", "starts_at", "ends_at", "deleted_at"],
  clinic_closure: ["day", "deleted_at"],
  calendar_settings: ["slug", "auto_confirm_online_bookings", "cancellation_window_minutes", "slot_step_minutes", "show_vet_names_online"],
  calendar_feed: ["user_id"],
  consent_record: ["tutor_id", "channel", "purpose", "granted", "source", "recorded_at", "recorded_by"],
  consent: ["tutor_id", "channel", "purpose", "status", "source", "recorded_at"],
  reminder_rule: ["kind", "offset", "channels", "enabled"],
  reminder: ["rule_id", "kind", "subject_id", "patient_id", "tutor_id", "channel", "due_at", "status", "sent_at", "delivered_at", "read_at"],
};

/**
 * Time-based events are not changes: their data is what the morning's run wrote, cut to these
 * fields. A reminder sender acts on them without a second call, so they name who to remind and
 * the number to reach them at, and nothing else about them.
 */
export const DUE_EVENT_FIELDS: Record<string, readonly string[]> = {
  "vaccination.due": ["vaccination_id", "patient_id", "patient_name", "vaccine", "due_date", "reminder_status", "tutor_id", "tutor_name", "tutor_phone"],
  "alert.due": ["patient_id", "kind", "due_date", "tutor_id", "tutor_phone"],
};

export interface PayloadEvent extends StoredEventFields {
  id: string;
  action: string;
  occurred_at: Date;
  entity_type: string;
  entity_id: string;
  clinic_id: string;
  actor_type: string;
  actor_id: string | null;
}

export interface WebhookData {
  object: string;
  id: string;
  clinic_id: string;
  actor: { type: string; id: string | null };
  /** The names of the fields this event changed (every set field on creation). */
  changed: string[];
  /** The values a receiver acts on, per the lists above. */
  fields: Record<string, unknown>;
}

/** The data of an event as a receiver gets it. */
export function webhookData(event: PayloadEvent): WebhookData {
  const due = DUE_EVENT_FIELDS[event.action];
  const values = eventNewValues(event);
  const allowed = due ?? WEBHOOK_FIELDS[event.entity_type] ?? [];
  const fields: Record<string, unknown> = {};
  for (const name of allowed) if (name in values) fields[name] = values[name];
  return {
    object: event.entity_type,
    id: event.entity_id,
    clinic_id: event.clinic_id,
    actor: { type: event.actor_type, id: event.actor_id },
    changed: due ? [] : changedFieldNames(event),
    fields,
  };
}

/** The body a receiver gets: the event's type, time and thin data. */
export const webhookPayload = (event: PayloadEvent) => JSON.stringify({ type: event.action, timestamp: rfc3339(event.occurred_at), data: webhookData(event) });
