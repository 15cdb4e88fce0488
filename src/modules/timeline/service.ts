import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Db, ServiceContext } from "../../db/client";
import { pageOf, recordView } from "../../db/clinic-records";
import { keyset, type PageRequest } from "../../db/keyset";
import { clinicalNotes, invoices, noteAddenda, patientTimeline, prescriptions, reminderMessages, vaccinations, visits, vitals, type TimelineKind } from "../../db/schema";
import { addendumView, noteView } from "../notes/service";
import { patientRecords } from "../patients/service";
import { view as prescriptionView } from "../prescriptions/service";
import { messageView } from "../reminders/service";
import type { TimelineFilters } from "./model";

type TimelineRow = typeof patientTimeline.$inferSelect;
type Entry = TimelineRow & { summary: string; record: Record<string, unknown> };

/** Newest first: by when it happened, then id. */
export const TIMELINE_KEYSET = keyset<TimelineRow>("patient_timeline", [patientTimeline.at, patientTimeline.id]);

type CursorRequest = Extract<PageRequest, { kind: "cursor" }>;

const CHANNEL_WORDS: Readonly<Record<string, string>> = { email: "e-mail", whatsapp: "WhatsApp" };
const REMINDER_WORDS: Readonly<Record<string, string>> = { vaccination_due: "vaccination due", appointment: "appointment", follow_up: "follow-up" };
/** A reminder's line: what happened to it, on which channel, about what (and why it was not sent). */
const reminderSummary = (r: typeof reminderMessages.$inferSelect) =>
  `Reminder ${r.status === "suppressed" ? "not sent" : r.status} (${CHANNEL_WORDS[r.channel] ?? r.channel}): ${REMINDER_WORDS[r.kind] ?? r.kind}${r.suppressed_reason ? `, ${r.suppressed_reason.replace(/_/g, " ")}` : ""}`;

const grams = (g: number) => (g >= 1000 ? `${(g / 1000).toLocaleString("en", { maximumFractionDigits: 2 })} kg` : `${g} g`);
const loaders: Record<TimelineKind, (db: Db, clinicId: string, ids: string[]) => Promise<{ id: string; summary: string; record: Record<string, unknown> }[]>> = {
  async visit(db, clinicId, ids) {
    const rows = await db.select().from(visits).where(and(eq(visits.clinic_id, clinicId), inArray(visits.id, ids)));
    return rows.map((r) => ({ id: r.id, summary: [`Visit (${r.status.replace("_", " ")})`, r.reason].filter(Boolean).join(": "), record: recordView(r) }));
  },
  async note(db, clinicId, ids) {
    const rows = await db.select().from(clinicalNotes).where(and(eq(clinicalNotes.clinic_id, clinicId), inArray(clinicalNotes.id, ids)));
    const addenda = await db.select().from(noteAddenda).where(and(eq(noteAddenda.clinic_id, clinicId), inArray(noteAddenda.note_id, ids), isNull(noteAddenda.deleted_at)));
    return rows.map((r) => ({
      id: r.id,
      summary: `Signed note${r.diagnoses.length ? `: ${r.diagnoses.join(", ")}` : r.assessment ? `: ${r.assessment.slice(0, 120)}` : ""}`,
      record: noteView({ ...r, addenda: addenda.filter((a) => a.note_id === r.id).sort((a, b) => a.created_at.getTime() - b.created_at.getTime()) }),
    }));
  },
  async addendum(db, clinicId, ids) {
    const rows = await db.select().from(noteAddenda).where(and(eq(noteAddenda.clinic_id, clinicId), inArray(noteAddenda.id, ids)));
    return rows.map((r) => ({ id: r.id, summary: `Addendum: ${r.text.slice(0, 120)}`, record: addendumView(r) }));
  },
  async vitals(db, clinicId, ids) {
    const rows = await db.select().from(vitals).where(and(eq(vitals.clinic_id, clinicId), inArray(vitals.id, ids)));
    return rows.map((r) => {
      const parts = [
        r.weight_grams != null ? grams(r.weight_grams) : null,
        r.temperature_dc != null ? `${(r.temperature_dc / 10).toFixed(1)} °C` : null,
        r.heart_rate_bpm != null ? `HR ${r.heart_rate_bpm}` : null,
        r.respiratory_rate_bpm != null ? `RR ${r.respiratory_rate_bpm}` : null,
        r.body_condition_score != null ? `BCS ${r.body_condition_score}/9` : null,
      ];
      return { id: r.id, summary: `Vitals: ${parts.filter(Boolean).join(", ")}`, record: recordView(r) };
    });
  },
  async vaccination(db, clinicId, ids) {
    const rows = await db.select().from(vaccinations).where(and(eq(vaccinations.clinic_id, clinicId), inArray(vaccinations.id, ids)));
    return rows.map((r) => ({ id: r.id, summary: `${r.given_at ? "Vaccination" : "Vaccine due"}: ${r.vaccine}${r.next_due_on ? ` (next due ${r.next_due_on})` : ""}`, record: recordView(r) }));
  },
  async prescription(db, clinicId, ids) {
    const rows = await db.select().from(prescriptions).where(and(eq(prescriptions.clinic_id, clinicId), inArray(prescriptions.id, ids)));
    return rows.map((r) => ({ id: r.id, summary: `Prescription${r.cancelled_at ? " (cancelled)" : ""}: ${r.drug}, ${r.dose} ${r.route} ${r.frequency}`, record: prescriptionView(r) }));
  },
  async invoice(db, clinicId, ids) {
    const rows = await db.select().from(invoices).where(and(eq(invoices.clinic_id, clinicId), inArray(invoices.id, ids)));
    return rows.map((r) => ({ id: r.id, summary: `Invoice (${r.status}): ${r.total_amount} ${r.currency}`, record: recordView(r) }));
  },
  async reminder(db, clinicId, ids) {
    const rows = await db.select().from(reminderMessages).where(and(eq(reminderMessages.clinic_id, clinicId), inArray(reminderMessages.id, ids)));
    return rows.map((r) => ({ id: r.id, summary: reminderSummary(r), record: messageView(r) }));
  },
};

/**
 * One page of the patient's timeline, newest first: the view names the entries in order, and
 * each kind's records are read in one query per kind on the page.
 */
export async function timelinePage(ctx: ServiceContext, clinicId: string, patientId: string, filters: TimelineFilters, page: CursorRequest) {
  await patientRecords.find(ctx, clinicId, patientId);
  const db = ctx.db as Db;
  const found = await pageOf<TimelineRow>(
    db,
    patientTimeline as never,
    [eq(patientTimeline.clinic_id, clinicId), eq(patientTimeline.patient_id, patientId), filters.kind ? inArray(patientTimeline.kind, filters.kind.split(",") as TimelineKind[]) : undefined],
    page,
    TIMELINE_KEYSET,
  );
  const details = new Map<string, { summary: string; record: Record<string, unknown> }>();
  const kinds = [...new Set(found.rows.map((r) => r.kind))];
  for (const kind of kinds) {
    for (const entry of await loaders[kind](db, clinicId, found.rows.filter((r) => r.kind === kind).map((r) => r.id))) details.set(entry.id, entry);
  }
  return { rows: found.rows.map((row): Entry => ({ ...row, ...details.get(row.id)! })), total: null };
}

export const entryView = (row: Entry) => ({ kind: row.kind, id: row.id, at: row.at.toISOString(), summary: row.summary, record: row.record });
