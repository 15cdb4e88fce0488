import { and, asc, eq, inArray, isNotNull, isNull, or, type SQL } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { clinicRecords } from "../../db/clinic-records";
import type { PageRequest } from "../../db/keyset";
import { clinicalNotes, noteAddenda, type Role } from "../../db/schema";
import { newId } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { serialize } from "../../lib/time";
import { visitRecords } from "../visits/service";
import type { AddendumInput, NoteInput } from "./model";

export const noteRecords = clinicRecords(clinicalNotes, "Note");

type NoteRow = typeof clinicalNotes.$inferSelect;
type AddendumRow = typeof noteAddenda.$inferSelect;
export type NoteWithAddenda = NoteRow & { addenda: AddendumRow[] };

/** Who asks: a note's draft is its author's (and the owner's) alone. */
export interface ClinicalActor {
  clinicId: string;
  userId: string;
  role: Role;
}

export const addendumView = (row: AddendumRow) => serialize({ id: row.id, note_id: row.note_id, author_id: row.author_id, text: row.text, created_at: row.created_at });

export function noteView(row: NoteWithAddenda) {
  const { deleted_at: _deleted, addenda, ...note } = row;
  return serialize({ ...note, status: note.signed_at ? ("signed" as const) : ("draft" as const), addenda: addenda.map(addendumView) });
}

/** The addenda of these notes, oldest first. */
async function withAddenda(ctx: ServiceContext, clinicId: string, notes: NoteRow[]): Promise<NoteWithAddenda[]> {
  if (notes.length === 0) return [];
  const addenda = await ctx.db
    .select()
    .from(noteAddenda)
    .where(and(eq(noteAddenda.clinic_id, clinicId), isNull(noteAddenda.deleted_at), inArray(noteAddenda.note_id, notes.map((n) => n.id))))
    .orderBy(asc(noteAddenda.created_at), asc(noteAddenda.id));
  return notes.map((note) => ({ ...note, addenda: addenda.filter((a) => a.note_id === note.id) }));
}

/** Drafts are seen by their author and the owner; signed notes by everyone of the clinic. */
const visibleTo = (actor: ClinicalActor): SQL | undefined =>
  actor.role === "owner" ? undefined : or(isNotNull(clinicalNotes.signed_at), eq(clinicalNotes.author_id, actor.userId));

const mayHandleDraft = (actor: ClinicalActor, note: NoteRow) => actor.role === "owner" || note.author_id === actor.userId;

/** A note the actor may see: another's draft is 403 (it exists in the clinic, but is not theirs). */
async function findVisible(ctx: ServiceContext, actor: ClinicalActor, id: string): Promise<NoteRow> {
  const note = await noteRecords.find(ctx, actor.clinicId, id);
  if (!note.signed_at && !mayHandleDraft(actor, note)) throw new AppError("FORBIDDEN", "A draft note is open only to its author and the owner");
  return note;
}

const signedConflict = (note: { id: string; signed_at: Date | null }) =>
  new AppError("NOTE_SIGNED", "The note is signed and final; add an addendum to correct it", { note_id: note.id, signed_at: note.signed_at?.toISOString() ?? null });

/** A draft the actor may change; a signed note is 409 NOTE_SIGNED. */
async function findOwnDraft(ctx: ServiceContext, actor: ClinicalActor, id: string): Promise<NoteRow> {
  const note = await findVisible(ctx, actor, id);
  if (note.signed_at) throw signedConflict(note);
  if (!mayHandleDraft(actor, note)) throw new AppError("FORBIDDEN", "Only the note's author or the owner can change a draft");
  return note;
}

export async function view(ctx: ServiceContext, actor: ClinicalActor, id: string) {
  const [note] = await withAddenda(ctx, actor.clinicId, [await findVisible(ctx, actor, id)]);
  return noteView(note!);
}

/** A note on a visit that took or takes place (not on a cancelled or missed one). */
export async function create(ctx: ServiceContext, actor: ClinicalActor, visitId: string, input: NoteInput) {
  const visit = await visitRecords.find(ctx, actor.clinicId, visitId);
  if (visit.status === "cancelled" || visit.status === "no_show") {
    throw new AppError("INVALID_STATE_TRANSITION", `A ${visit.status} visit takes no consultation note`, { status: visit.status });
  }
  const row = await noteRecords.insert(ctx, actor.clinicId, { ...input, visit_id: visit.id, patient_id: visit.patient_id, author_id: actor.userId });
  return noteView({ ...row, addenda: [] });
}

export async function listForVisit(ctx: ServiceContext, actor: ClinicalActor, visitId: string, page: PageRequest) {
  await visitRecords.find(ctx, actor.clinicId, visitId);
  const found = await noteRecords.page(ctx, actor.clinicId, [eq(clinicalNotes.visit_id, visitId), visibleTo(actor)], page);
  return { ...found, rows: await withAddenda(ctx, actor.clinicId, found.rows) };
}

/** Delta sync of a visit's notes the actor may see: changed after `since`, deleted drafts included. */
export async function changesForVisit(ctx: ServiceContext, actor: ClinicalActor, visitId: string, since: Date, page: PageRequest) {
  await visitRecords.find(ctx, actor.clinicId, visitId);
  const found = await noteRecords.changedSince(ctx, actor.clinicId, since, page, [eq(clinicalNotes.visit_id, visitId), visibleTo(actor)]);
  return { ...found, rows: await withAddenda(ctx, actor.clinicId, found.rows) };
}

/**
 * Edits a draft. The update itself says `signed_at is null`, so a note signed between the read
 * and the write is not changed (409 NOTE_SIGNED), on either database.
 */
export async function update(ctx: ServiceContext, actor: ClinicalActor, id: string, input: NoteInput) {
  await findOwnDraft(ctx, actor, id);
  const [row] = await ctx.db
    .update(clinicalNotes)
    .set({ ...input, updated_at: ctx.clock.now() })
    .where(and(eq(clinicalNotes.clinic_id, actor.clinicId), eq(clinicalNotes.id, id), isNull(clinicalNotes.deleted_at), isNull(clinicalNotes.signed_at)))
    .returning();
  if (!row) throw await refusalAfterRace(ctx, actor, id);
  const [note] = await withAddenda(ctx, actor.clinicId, [row]);
  return noteView(note!);
}

/** Why a conditional write found nothing: the note was signed (409) or deleted (404) meanwhile. */
async function refusalAfterRace(ctx: ServiceContext, actor: ClinicalActor, id: string): Promise<AppError> {
  const [now] = await ctx.db.select().from(clinicalNotes).where(and(eq(clinicalNotes.clinic_id, actor.clinicId), eq(clinicalNotes.id, id))).limit(1);
  return now?.signed_at ? signedConflict(now) : AppError.notFound("Note", id);
}

/** A draft is withdrawn (soft delete, kept in the database); a signed note never is. */
export async function remove(ctx: ServiceContext, actor: ClinicalActor, id: string) {
  await findOwnDraft(ctx, actor, id);
  const now = ctx.clock.now();
  const rows = await ctx.db
    .update(clinicalNotes)
    .set({ deleted_at: now, updated_at: now })
    .where(and(eq(clinicalNotes.clinic_id, actor.clinicId), eq(clinicalNotes.id, id), isNull(clinicalNotes.deleted_at), isNull(clinicalNotes.signed_at)))
    .returning({ id: clinicalNotes.id });
  if (rows.length === 0) throw await refusalAfterRace(ctx, actor, id);
}

/**
 * Signs a draft: final from then on. One conditional UPDATE (`where signed_at is null`) decides
 * between two signers racing: exactly one row changes, the other writer gets 409 NOTE_SIGNED.
 */
export async function sign(ctx: ServiceContext, actor: ClinicalActor, id: string) {
  const note = await findOwnDraft(ctx, actor, id);
  if (![note.subjective, note.objective, note.assessment, note.plan].some((text) => text && text.trim()) && note.diagnoses.length === 0) {
    throw AppError.validation([{ path: "body", message: "An empty note cannot be signed; write at least one SOAP section" }], "An empty note cannot be signed");
  }
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .update(clinicalNotes)
    .set({ signed_at: now, signed_by: actor.userId, updated_at: now })
    .where(and(eq(clinicalNotes.clinic_id, actor.clinicId), eq(clinicalNotes.id, id), isNull(clinicalNotes.deleted_at), isNull(clinicalNotes.signed_at)))
    .returning();
  if (!row) throw await refusalAfterRace(ctx, actor, id);
  const [signed] = await withAddenda(ctx, actor.clinicId, [row]);
  return noteView(signed!);
}

/** A correction to a signed note: any clinical writer may add one; it is never edited. A draft is corrected by editing it. */
export async function addAddendum(ctx: ServiceContext, actor: ClinicalActor, id: string, input: AddendumInput) {
  const note = await findVisible(ctx, actor, id);
  if (!note.signed_at) throw new AppError("CONFLICT", "The note is still a draft: edit it instead of adding an addendum", { note_id: note.id });
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(noteAddenda)
    .values({ id: newId(), clinic_id: actor.clinicId, created_at: now, updated_at: now, note_id: note.id, patient_id: note.patient_id, author_id: actor.userId, text: input.text })
    .returning();
  return addendumView(row!);
}
