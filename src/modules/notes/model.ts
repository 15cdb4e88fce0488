import { t } from "elysia";
import { Nullable, NullableString, NullableTimestamp, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";

/** Who writes the clinical record (notes, addenda, vitals, vaccinations, prescriptions); every role reads it. */
export const CLINICAL_WRITERS = ["owner", "vet"] as const;

const SoapText = t.String({ minLength: 1, maxLength: 20_000 });
const Diagnoses = t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 20, description: "Short diagnosis labels" });

export const AddendumModel = t.Object({
  id: Uuid,
  note_id: Uuid,
  author_id: Uuid,
  text: t.String(),
  created_at: Timestamp,
});

export const NoteModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  visit_id: Uuid,
  patient_id: Uuid,
  author_id: Uuid,
  status: t.Union([t.Literal("draft"), t.Literal("signed")]),
  subjective: NullableString(),
  objective: NullableString(),
  assessment: NullableString(),
  plan: NullableString(),
  diagnoses: t.Array(t.String()),
  signed_at: NullableTimestamp,
  signed_by: Nullable(Uuid),
  addenda: t.Array(AddendumModel),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const soapFields = {
  subjective: t.Optional(Nullable(SoapText)),
  objective: t.Optional(Nullable(SoapText)),
  assessment: t.Optional(Nullable(SoapText)),
  plan: t.Optional(Nullable(SoapText)),
  diagnoses: t.Optional(Diagnoses),
};

export const CreateNoteBody = t.Object(soapFields, { minProperties: 1 });
export const UpdateNoteBody = t.Object(soapFields, { minProperties: 1 });
export const CreateAddendumBody = t.Object({ text: t.String({ minLength: 1, maxLength: 20_000 }) });
export const NoteListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export type NoteInput = typeof CreateNoteBody.static;
export type AddendumInput = typeof CreateAddendumBody.static;
/** A note as the API answers it. */
export type NoteView = typeof NoteModel.static;
export type AddendumView = typeof AddendumModel.static;
