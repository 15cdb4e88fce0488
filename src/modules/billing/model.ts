import { t } from "elysia";
import { DateFilters, Money, NullableString, StrictInteger, Timestamp, Uuid, ValueList } from "../../http/common-model";
import { cursorQueryFields, orderQueryField } from "../../http/pagination";
import { INVOICE_STATUSES, PAYMENT_METHODS, TAX_DOC_TYPES } from "../../db/schema";

const NullableTimestamp = t.Union([Timestamp, t.Null()]);
const record = { id: Uuid, clinic_id: Uuid, created_at: Timestamp, updated_at: Timestamp };

// Invoices
const ItemInput = t.Object({
  description: t.String({ minLength: 1, maxLength: 300 }),
  quantity: StrictInteger({ minimum: 1, maximum: 100_000 }),
  unit_price: Money({ maximum: 10_000_000_000 }),
});
export const InvoiceItemModel = t.Object({ id: Uuid, description: t.String(), quantity: t.Integer(), unit_price: t.Integer(), total_amount: t.Integer() });
export const InvoiceModel = t.Object({
  ...record,
  tutor_id: Uuid,
  visit_id: t.Union([Uuid, t.Null()]),
  status: t.String(),
  currency: t.String(),
  items: t.Optional(t.Array(InvoiceItemModel)),
  net_amount: t.Integer(),
  tax_amount: t.Integer(),
  total_amount: t.Integer(),
  paid_amount: t.Integer(),
  balance: t.Integer({ description: "total_amount − paid_amount" }),
  emitted_at: NullableTimestamp,
  paid_at: NullableTimestamp,
  voided_at: NullableTimestamp,
  notes: NullableString(),
});
export const CreateInvoiceBody = t.Object({
  tutor_id: Uuid,
  visit_id: t.Optional(t.Union([Uuid, t.Null()])),
  items: t.Array(ItemInput, { minItems: 1, maxItems: 200 }),
  notes: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
});
export const UpdateInvoiceBody = t.Object(
  {
    tutor_id: t.Optional(Uuid),
    visit_id: t.Optional(t.Union([Uuid, t.Null()])),
    items: t.Optional(t.Array(ItemInput, { minItems: 1, maxItems: 200 })),
    notes: t.Optional(t.Union([t.String({ maxLength: 2000 }), t.Null()])),
  },
  { minProperties: 1 },
);
export const InvoiceListQuery = t.Object({ ...cursorQueryFields, ...orderQueryField, ...DateFilters, status: t.Optional(ValueList(INVOICE_STATUSES)), tutor_id: t.Optional(Uuid) });

// Payments and refunds
export const PaymentModel = t.Object({
  ...record,
  invoice_id: Uuid,
  amount: t.Integer(),
  currency: t.String(),
  method: t.String(),
  reference: NullableString(),
  paid_at: Timestamp,
  refunded_amount: t.Integer(),
});
export const CreatePaymentBody = t.Object({
  invoice_id: Uuid,
  amount: Money({ minimum: 1 }),
  method: t.Union(PAYMENT_METHODS.map((m) => t.Literal(m))),
  reference: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()])),
});
export const PaymentListQuery = t.Object({ ...cursorQueryFields, ...orderQueryField, ...DateFilters, invoice_id: t.Optional(Uuid), method: t.Optional(ValueList(PAYMENT_METHODS)) });

export const RefundModel = t.Object({ ...record, payment_id: Uuid, invoice_id: Uuid, amount: t.Integer(), currency: t.String(), reason: NullableString(), refunded_at: Timestamp });
export const CreateRefundBody = t.Object({
  payment_id: Uuid,
  amount: Money({ minimum: 1 }),
  reason: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()])),
});
export const RefundListQuery = t.Object({ ...cursorQueryFields, ...DateFilters, payment_id: t.Optional(Uuid), invoice_id: t.Optional(Uuid) });

// SII tax documents
export const TaxDocumentModel = t.Object({
  ...record,
  invoice_id: Uuid,
  doc_type: t.Integer(),
  folio: t.Integer(),
  receiver_rut: NullableString(),
  receiver_name: NullableString(),
  referenced_document_id: t.Union([Uuid, t.Null()]),
  issuer: t.Object(
    { name: NullableString(), legal_name: NullableString(), rut: NullableString(), address: NullableString(), giro: NullableString() },
    { description: "The clinic's issuer data when the document was issued" },
  ),
  currency: t.String(),
  net_amount: t.Integer(),
  tax_amount: t.Integer(),
  total_amount: t.Integer(),
  issued_at: Timestamp,
});
export const CreateTaxDocumentBody = t.Object({
  doc_type: t.Union(TAX_DOC_TYPES.map((d) => t.Literal(d)), { description: "33 factura, 39 boleta, 61 nota de crédito" }),
  invoice_id: t.Optional(Uuid),
  receiver_rut: t.Optional(t.String({ maxLength: 15, examples: ["76.123.456-0"] })),
  receiver_name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  referenced_document_id: t.Optional(Uuid),
});
export const TaxDocumentListQuery = t.Object({ ...cursorQueryFields, ...DateFilters, doc_type: t.Optional(ValueList(TAX_DOC_TYPES)), invoice_id: t.Optional(Uuid) });

export type CreateInvoiceInput = typeof CreateInvoiceBody.static;
export type UpdateInvoiceInput = typeof UpdateInvoiceBody.static;
export type CreatePaymentInput = typeof CreatePaymentBody.static;
export type CreateRefundInput = typeof CreateRefundBody.static;
export type CreateTaxDocumentInput = typeof CreateTaxDocumentBody.static;
