import { sql } from "drizzle-orm";
import { check, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { moneyColumn, recordColumns, softDeleteColumn, timestampColumn } from "./columns";

const live = (t: { deleted_at: unknown }) => sql`${t.deleted_at} is null`;

export const INVOICE_STATUSES = ["draft", "emitted", "paid", "void", "credited"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const invoices = pgTable(
  "invoices",
  {
    ...recordColumns(),
    tutor_id: uuid("tutor_id").notNull(),
    visit_id: uuid("visit_id"),
    status: text("status").$type<InvoiceStatus>().notNull().default("draft"),
    currency: text("currency").notNull(),
    net_amount: moneyColumn("net_amount").notNull(),
    tax_amount: moneyColumn("tax_amount").notNull(),
    total_amount: moneyColumn("total_amount").notNull(),
    paid_amount: moneyColumn("paid_amount").notNull().default(0),
    /** The IVA rate the invoice was computed with (basis points): later changes of the clinic's rate do not touch it. */
    tax_rate_bps: integer("tax_rate_bps").notNull().default(1900),
    /** What notas de crédito have taken off the sale (their totals); the balance is total − credited − paid. */
    credited_amount: moneyColumn("credited_amount").notNull().default(0),
    emitted_at: timestampColumn("emitted_at"),
    paid_at: timestampColumn("paid_at"),
    voided_at: timestampColumn("voided_at"),
    notes: text("notes"),
    ...softDeleteColumn(),
  },
  (t) => [
    index("invoices_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("invoices_clinic_emitted_idx").on(t.clinic_id, t.emitted_at, t.id).where(live(t)),
    index("invoices_clinic_tutor_idx").on(t.clinic_id, t.tutor_id, t.created_at, t.id).where(live(t)),
    // The timeline reaches a patient's invoices through its visits.
    index("invoices_clinic_visit_idx").on(t.clinic_id, t.visit_id).where(live(t)),
    // The clinic's open invoices (emitted, a balance left) in emission order: the overdue report
    // reads these few instead of every invoice the clinic ever emitted.
    index("invoices_clinic_open_idx").on(t.clinic_id, t.emitted_at, t.id).where(sql`${t.status} = 'emitted' and ${t.paid_amount} < ${t.total_amount} and ${t.deleted_at} is null`),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("invoices_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("invoices_status_check", sql`${t.status} in ('draft', 'emitted', 'paid', 'void', 'credited')`),
    check("invoices_paid_within_total", sql`${t.paid_amount} >= 0 and ${t.credited_amount} >= 0 and ${t.paid_amount} + ${t.credited_amount} <= ${t.total_amount}`),
  ],
);

export const invoiceItems = pgTable(
  "invoice_items",
  {
    ...recordColumns(),
    invoice_id: uuid("invoice_id")
      .notNull()
      .references(() => invoices.id),
    position: integer("position").notNull(),
    description: text("description").notNull(),
    quantity: integer("quantity").notNull(),
    unit_price: moneyColumn("unit_price").notNull(),
    total_amount: moneyColumn("total_amount").notNull(),
  },
  (t) => [index("invoice_items_invoice_idx").on(t.invoice_id, t.position)],
);

export const PAYMENT_METHODS = ["cash", "card", "transfer", "other"] as const;

export const payments = pgTable(
  "payments",
  {
    ...recordColumns(),
    invoice_id: uuid("invoice_id")
      .notNull()
      .references(() => invoices.id),
    amount: moneyColumn("amount").notNull(),
    currency: text("currency").notNull(),
    method: text("method").notNull(),
    reference: text("reference"),
    paid_at: timestampColumn("paid_at").notNull(),
    refunded_amount: moneyColumn("refunded_amount").notNull().default(0),
    ...softDeleteColumn(),
  },
  (t) => [
    index("payments_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("payments_clinic_paid_idx").on(t.clinic_id, t.paid_at).where(live(t)),
    index("payments_invoice_idx").on(t.invoice_id),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("payments_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("payments_amount_positive", sql`${t.amount} > 0`),
    check("payments_refund_within_amount", sql`${t.refunded_amount} >= 0 and ${t.refunded_amount} <= ${t.amount}`),
  ],
);

export const refunds = pgTable(
  "refunds",
  {
    ...recordColumns(),
    payment_id: uuid("payment_id")
      .notNull()
      .references(() => payments.id),
    invoice_id: uuid("invoice_id").notNull(),
    amount: moneyColumn("amount").notNull(),
    currency: text("currency").notNull(),
    reason: text("reason"),
    refunded_at: timestampColumn("refunded_at").notNull(),
    /** The nota de crédito (61) the refund issued, when its sale has a factura or boleta. */
    credit_note_id: uuid("credit_note_id"),
    ...softDeleteColumn(),
  },
  (t) => [
    index("refunds_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("refunds_clinic_refunded_idx").on(t.clinic_id, t.refunded_at).where(live(t)),
    index("refunds_payment_idx").on(t.payment_id),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("refunds_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("refunds_amount_positive", sql`${t.amount} > 0`),
  ],
);

export const TAX_DOC_TYPES = [33, 39, 61] as const;

export const taxDocuments = pgTable(
  "tax_documents",
  {
    ...recordColumns(),
    invoice_id: uuid("invoice_id").notNull(),
    doc_type: integer("doc_type").notNull(),
    folio: integer("folio").notNull(),
    receiver_rut: text("receiver_rut"),
    receiver_name: text("receiver_name"),
    referenced_document_id: uuid("referenced_document_id"),
    /** A nota de crédito's CodRef: 1 anula, 2 corrige texto, 3 corrige montos (null on 33 and 39). */
    reference_code: integer("reference_code"),
    /** The clinic's issuer data as it was when the document was issued (a later change does not rewrite it). */
    issuer_name: text("issuer_name"),
    issuer_legal_name: text("issuer_legal_name"),
    issuer_rut: text("issuer_rut"),
    issuer_address: text("issuer_address"),
    issuer_giro: text("issuer_giro"),
    currency: text("currency").notNull(),
    net_amount: moneyColumn("net_amount").notNull(),
    tax_amount: moneyColumn("tax_amount").notNull(),
    total_amount: moneyColumn("total_amount").notNull(),
    issued_at: timestampColumn("issued_at").notNull(),
    /** A factura's receiver beyond RUT and name (giro, address, comuna). */
    receiver_giro: text("receiver_giro"),
    receiver_address: text("receiver_address"),
    receiver_commune: text("receiver_commune"),
    /**
     * Set when the receiver (a tutor) had their data erased: the receiver fields are kept for the
     * Código Tributario's period but every read path shows them as "dato bloqueado".
     */
    receiver_blocked_at: timestampColumn("receiver_blocked_at"),
    /** The CAF the folio came from and its environment (production, certification or test); null on documents issued before CAFs. */
    caf_id: uuid("caf_id"),
    environment: text("environment"),
    /** The signed DTE as issued (ISO-8859-1 text, held as a string). */
    signed_xml: text("signed_xml"),
    /** For a future sender to the SII: when the envelope went, the SII's track id and its answer. Null today. */
    sent_at: timestampColumn("sent_at"),
    track_id: text("track_id"),
    sii_status: text("sii_status"),
    ...softDeleteColumn(),
  },
  (t) => [
    // Folios are unique within an environment: a production range may start at 1 beside a certification one.
    uniqueIndex("tax_documents_folio_key").on(t.clinic_id, t.environment, t.doc_type, t.folio),
    uniqueIndex("tax_documents_one_sale_doc_per_invoice")
      .on(t.invoice_id)
      .where(sql`${t.doc_type} in (33, 39)`),
    index("tax_documents_clinic_created_idx").on(t.clinic_id, t.created_at, t.id).where(live(t)),
    index("tax_documents_clinic_issued_idx").on(t.clinic_id, t.issued_at, t.id).where(live(t)),
    // Delta sync (updated_since) reads the clinic's changes in order, deleted rows included.
    index("tax_documents_clinic_updated_idx").on(t.clinic_id, t.updated_at, t.id),
    check("tax_documents_doc_type_check", sql`${t.doc_type} in (33, 39, 61)`),
  ],
);

/** The last folio handed out per clinic and document type; a row lock on it serializes issuance. */
export const folioCounters = pgTable(
  "folio_counters",
  {
    clinic_id: uuid("clinic_id").notNull(),
    doc_type: integer("doc_type").notNull(),
    last_folio: integer("last_folio").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clinic_id, t.doc_type] })],
);

/** Stored responses of financial POSTs, keyed per clinic. */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    clinic_id: uuid("clinic_id").notNull(),
    key: uuid("key").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    request_hash: text("request_hash").notNull(),
    state: text("state").$type<"in_progress" | "completed">().notNull(),
    response_status: integer("response_status"),
    response_body: jsonb("response_body"),
    created_at: timestampColumn("created_at").notNull(),
    expires_at: timestampColumn("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.clinic_id, t.key] }), index("idempotency_keys_expires_idx").on(t.expires_at)],
);
