import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { rowsOf } from "../../db/client";
import type { ChangeActor } from "../../db/change-context";
import type { Clock } from "../../lib/clock";
import { AppError } from "../../lib/errors";
import { rfc3339 } from "../../lib/time";

/** The export's shape: its name and version, so a receiver can tell what it reads. */
export const EXPORT_FORMAT = "vet-clinic.tutor-export" as const;
export const EXPORT_VERSION = 1 as const;
/** What an erased tutor's name reads as; the rest of their personal data is gone. */
export const BLOCKED_NAME = "dato bloqueado";

/** The tutor's personal fields: erased on request. */
const PERSONAL_FIELDS = ["name", "email", "phone", "national_id", "address", "notes"];
/** A tax document's receiver fields, kept for the Código Tributario's period and shown blocked. */
const RECEIVER_FIELDS = ["receiver_rut", "receiver_name", "receiver_giro", "receiver_address", "receiver_commune"];
const blockReceiver = (document: Record<string, unknown>) => Object.fromEntries(Object.entries(document).map(([key, value]) => [key, RECEIVER_FIELDS.includes(key) && value !== null ? BLOCKED_NAME : value]));

/** Columns no export shows: signed XML, keys, hashes. */
const NEVER_EXPORTED = ["signed_xml", "ted_xml", "private_key_encrypted"];

export interface RightsContext {
  database: Database;
  clock: Clock;
}

type Json = Record<string, unknown>;

async function rows(database: Database, text: string, params: unknown[]): Promise<Json[]> {
  const found = await database.query<{ row: Json | string }>(text, params);
  return found.map((r) => (typeof r.row === "string" ? (JSON.parse(r.row) as Json) : r.row));
}

async function liveTutor(database: Database, clinicId: string, tutorId: string) {
  const [tutor] = await database.query<{ name: string; blocked_at: Date | string | null }>("select name, blocked_at from tutors where clinic_id = $1 and id = $2 and deleted_at is null", [clinicId, tutorId]);
  if (!tutor) throw AppError.notFound("Tutor", tutorId);
  return tutor;
}

/**
 * Everything the clinic holds about a tutor and their patients, as one document: the tutor, the
 * patients, visits, the clinical record (signed notes, addenda, vitals, vaccinations,
 * prescriptions, alerts), invoices with their items, payments, refunds and tax documents,
 * consents, the reminders sent, and the event log's entries about any of them.
 */
export async function exportTutor({ database, clock }: RightsContext, clinicId: string, tutorId: string) {
  const current = await liveTutor(database, clinicId, tutorId);
  const strip = `- array[${NEVER_EXPORTED.map((c) => `'${c}'`).join(", ")}]`;
  const ofTutor = (table: string) => rows(database, `select to_jsonb(x) ${strip} as row from ${table} x where x.clinic_id = $1 and x.tutor_id = $2 order by x.created_at, x.id`, [clinicId, tutorId]);
  const ofPatients = (table: string, extra = "") =>
    rows(database, `select to_jsonb(x) ${strip} as row from ${table} x where x.clinic_id = $1 and x.patient_id in (select id from patients where clinic_id = $1 and tutor_id = $2) ${extra} order by x.created_at, x.id`, [clinicId, tutorId]);
  const ofInvoices = (table: string) => rows(database, `select to_jsonb(x) ${strip} as row from ${table} x where x.invoice_id in (select id from invoices where clinic_id = $1 and tutor_id = $2) order by x.id`, [clinicId, tutorId]);
  const [tutor] = await rows(database, `select to_jsonb(x) as row from tutors x where x.clinic_id = $1 and x.id = $2`, [clinicId, tutorId]);
  const patients = await ofTutor("patients");
  const visits = await ofPatients("visits");
  const invoices = await ofTutor("invoices");
  const messages = await ofTutor("reminder_messages");
  const ids = [tutorId, ...patients, ...visits, ...invoices, ...messages].map((item) => (typeof item === "string" ? item : String(item.id)));
  const events = await rows(
    database,
    "select jsonb_build_object('id', e.id, 'occurred_at', e.occurred_at, 'action', e.action, 'entity_type', e.entity_type, 'entity_id', e.entity_id, 'actor_type', e.actor_type, 'actor_name', e.actor_name, 'fields_before', e.fields_before, 'fields_after', e.fields_after) as row from events e where e.clinic_id = $1 and e.entity_id = any($2::uuid[]) order by e.occurred_at, e.seq",
    [clinicId, ids],
  );
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: rfc3339(clock.now()),
    tutor: tutor!,
    patients,
    visits,
    clinical_notes: await ofPatients("clinical_notes", "and x.signed_at is not null"),
    note_addenda: await ofPatients("note_addenda"),
    vitals: await ofPatients("vitals"),
    vaccinations: await ofPatients("vaccinations"),
    prescriptions: await ofPatients("prescriptions"),
    alerts: await ofPatients("alerts"),
    invoices,
    invoice_items: await ofInvoices("invoice_items"),
    payments: await ofInvoices("payments"),
    refunds: await ofInvoices("refunds"),
    // An erased tutor's tax documents keep their receiver data only where the law requires it, blocked.
    tax_documents: (await ofInvoices("tax_documents")).map((document) => (current.blocked_at || document.receiver_blocked_at ? blockReceiver(document) : document)),
    consents: await ofTutor("consent_records"),
    messages,
    events,
  };
}

/**
 * Erasure on the tutor's request: the personal fields are overwritten (the name reads "dato
 * bloqueado"), free text about them is cleared (consent evidence, where messages went), the event
 * log keeps that the fields changed but no longer their values, stored responses that carried
 * them are dropped, and the tutor is blocked (no reminders or marketing, hidden from lists and
 * search). Tax documents keep their receiver data, as the Código Tributario requires, blocked
 * (`receiver_blocked_at`: the API, query_database and the export show it as "dato bloqueado";
 * the event log's copies are dropped). Confirmed
 * by the tutor's name as it stands; recorded as one `tutor.erased` event without values.
 */
export async function eraseTutor({ database, clock }: RightsContext, clinicId: string, tutorId: string, confirmName: string, actor: ChangeActor) {
  const tutor = await liveTutor(database, clinicId, tutorId);
  if (tutor.blocked_at) throw new AppError("CONFLICT", "This tutor's data was already erased");
  if (confirmName.trim().toLocaleLowerCase("es") !== tutor.name.trim().toLocaleLowerCase("es")) {
    throw AppError.validation([{ path: "body.confirm_name", message: "Type the tutor's name exactly as it is recorded" }], "The name typed does not match");
  }
  const now = clock.now().toISOString();
  const personal = `array[${PERSONAL_FIELDS.map((f) => `'${f}'`).join(", ")}]`;
  await database.db.transaction(async (tx) => {
    // The erasure's own changes are not logged field by field (that would keep the values): one event says what happened.
    await tx.execute(sql`select set_config('app.audit', 'off', true)`);
    await tx.execute(sql`update tutors set name = ${BLOCKED_NAME}, email = null, phone = null, national_id = null, address = null, notes = null, blocked_at = ${now}, updated_at = ${now} where clinic_id = ${clinicId} and id = ${tutorId}`);
    await tx.execute(sql`update consent_records set evidence = null where clinic_id = ${clinicId} and tutor_id = ${tutorId}`);
    await tx.execute(sql`update reminder_messages set recipient = null, status = case when status = 'queued' then 'suppressed' else status end, suppressed_reason = case when status = 'queued' then 'tutor_blocked' else suppressed_reason end, updated_at = ${now} where clinic_id = ${clinicId} and tutor_id = ${tutorId}`);
    // Earlier events about the tutor keep which fields changed, not the values.
    await tx.execute(sql.raw(`update events set fields_before = fields_before - ${personal}, fields_after = fields_after - ${personal}, redacted_fields = (select array_agg(distinct f) from unnest(coalesce(redacted_fields, '{}') || (select coalesce(array_agg(k), '{}') from jsonb_object_keys(coalesce(fields_before, '{}') || coalesce(fields_after, '{}')) k where k = any(${personal}))) f) where clinic_id = '${clinicId}' and entity_type = 'tutor' and entity_id = '${tutorId}'`));
    await tx.execute(sql`update events set fields_before = fields_before - array['evidence', 'recipient'], fields_after = fields_after - array['evidence', 'recipient'] where clinic_id = ${clinicId} and entity_type in ('consent_record', 'reminder') and entity_id in (select id from consent_records where tutor_id = ${tutorId} union all select id from reminder_messages where tutor_id = ${tutorId})`);
    // Time-based events (vaccination.due, alert.due) carry the tutor's name and contact in their thin data.
    await tx.execute(sql`update events set changes = changes - array['tutor_name', 'tutor_phone', 'tutor_email'] where clinic_id = ${clinicId} and changes ->> 'tutor_id' = ${tutorId}`);
    // Tax documents keep their receiver data, blocked: every read path shows it as "dato bloqueado".
    await tx.execute(sql`update tax_documents set receiver_blocked_at = ${now}, updated_at = ${now} where clinic_id = ${clinicId} and invoice_id in (select id from invoices where clinic_id = ${clinicId} and tutor_id = ${tutorId})`);
    // The kept copy is the document itself: the event log's copies of its receiver fields go.
    const receiver = `array[${RECEIVER_FIELDS.map((f) => `'${f}'`).join(", ")}]`;
    await tx.execute(sql`update events set fields_before = fields_before - ${sql.raw(receiver)}, fields_after = fields_after - ${sql.raw(receiver)} where clinic_id = ${clinicId} and entity_type = 'tax_document' and entity_id in (select d.id from tax_documents d join invoices i on i.id = d.invoice_id and i.clinic_id = d.clinic_id where d.clinic_id = ${clinicId} and i.tutor_id = ${tutorId})`);
    // Stored responses that named the tutor, their invoices or their documents (a replay would show the values).
    await tx.execute(sql`
      delete from idempotency_keys k where k.clinic_id = ${clinicId} and (k.response_body::text like ${`%${tutorId}%`} or exists (
        select 1 from invoices i left join tax_documents d on d.invoice_id = i.id and d.clinic_id = i.clinic_id
        where i.clinic_id = ${clinicId} and i.tutor_id = ${tutorId} and (k.response_body::text like '%' || i.id::text || '%' or k.response_body::text like '%' || d.id::text || '%')))`);
    await tx.execute(sql`select set_config('app.audit', 'on', true)`);
    const inserted = await tx.execute(sql`
      insert into events (id, clinic_id, occurred_at, actor_type, actor_id, actor_name, action, entity_type, entity_id, changes, fields_after, redacted_fields)
      values (uuid_v7_at(${now}::timestamptz), ${clinicId}, ${now}::timestamptz, ${actor.type}, ${actor.id}, ${actor.name}, 'tutor.erased', 'tutor', ${tutorId}, '{}', jsonb_build_object('blocked_at', ${now}::text), ${sql.raw(personal)})
      returning id`);
    const eventId = rowsOf<{ id: string }>(inserted)[0]!.id;
    await tx.execute(sql`
      insert into webhook_deliveries (id, clinic_id, endpoint_id, event_id, state, attempts, next_attempt_at, created_at)
      select uuid_v7_at(${now}::timestamptz), ${clinicId}, e.id, ${eventId}, 'pending', 0, ${now}::timestamptz, ${now}::timestamptz
      from webhook_endpoints e
      where e.clinic_id = ${clinicId} and e.enabled and e.deleted_at is null and (e.events @> array['*'] or e.events @> array['tutor.erased'])`);
  });
}
