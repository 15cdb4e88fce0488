import { t } from "elysia";

export const EraseBody = t.Object({
  confirm_name: t.String({ minLength: 1, maxLength: 200, description: "The tutor's name, typed again as it is recorded" }),
});

const Rows = t.Array(t.Record(t.String(), t.Unknown()));

export const TutorExportModel = t.Object({
  format: t.Literal("vet-clinic.tutor-export"),
  version: t.Literal(1),
  exported_at: t.String({ format: "date-time" }),
  tutor: t.Record(t.String(), t.Unknown()),
  patients: Rows,
  visits: Rows,
  clinical_notes: Rows,
  note_addenda: Rows,
  vitals: Rows,
  vaccinations: Rows,
  prescriptions: Rows,
  alerts: Rows,
  invoices: Rows,
  invoice_items: Rows,
  payments: Rows,
  refunds: Rows,
  tax_documents: Rows,
  consents: Rows,
  messages: Rows,
  events: Rows,
});
