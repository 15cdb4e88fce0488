import { t } from "elysia";
import { INVOICE_STATUSES } from "../../../db/schema";
import { DateFilters, Money, Nullable, NullableString, NullableTimestamp, OptionalNullable, StrictInteger, UpdateBody, Uuid, ValueList } from "../../../http/common-model";
import { cursorQueryFields, orderQueryField, updatedSinceQueryField } from "../../../http/pagination";
import { record } from "../record-model";

export const ItemInput = t.Object({
  description: t.String({ minLength: 1, maxLength: 300, description: "One or more lines (CRLF and CR are stored as LF); no other control character" }),
  quantity: StrictInteger({ minimum: 1, maximum: 100_000 }),
  unit_price: Money({ minimum: 1, maximum: 10_000_000_000, description: "Net unit price, at least 1 (the SII's schema requires a positive PrcItem)" }),
});
export const InvoiceItemModel = t.Object({ id: Uuid, description: t.String(), quantity: t.Integer(), unit_price: t.Integer(), total_amount: t.Integer() });
export const InvoiceModel = t.Object({
  ...record,
  tutor_id: Uuid,
  visit_id: Nullable(Uuid),
  status: t.String(),
  currency: t.String(),
  items: t.Optional(t.Array(InvoiceItemModel)),
  net_amount: t.Integer(),
  tax_amount: t.Integer(),
  total_amount: t.Integer(),
  paid_amount: t.Integer(),
  credited_amount: t.Integer({ description: "What notas de crédito took off the sale" }),
  tax_rate_bps: t.Integer({ description: "The IVA rate the invoice was computed with (1900 = 19 %); a later change of the clinic's rate does not touch it" }),
  balance: t.Integer({ description: "total_amount − credited_amount − paid_amount" }),
  emitted_at: NullableTimestamp,
  paid_at: NullableTimestamp,
  voided_at: NullableTimestamp,
  notes: NullableString(),
});
export const CreateInvoiceBody = t.Object({
  tutor_id: Uuid,
  visit_id: OptionalNullable(Uuid),
  items: t.Array(ItemInput, { minItems: 1, maxItems: 200 }),
  notes: OptionalNullable(t.String({ maxLength: 2000 })),
});
export const UpdateInvoiceBody = UpdateBody(CreateInvoiceBody);
export const VoidInvoiceBody = t.Optional(
  t.Object({
    issue_credit_note: t.Optional(t.Boolean({ description: "An invoice with a factura or boleta is voided only with its nota de crédito (61, CodRef 1), issued in the same transaction" })),
  }),
);
export const InvoiceListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField, ...orderQueryField, ...DateFilters, status: t.Optional(ValueList(INVOICE_STATUSES)), tutor_id: t.Optional(Uuid) });

export type CreateInvoiceInput = typeof CreateInvoiceBody.static;
export type UpdateInvoiceInput = typeof UpdateInvoiceBody.static;
export type VoidInvoiceInput = NonNullable<typeof VoidInvoiceBody.static>;

/** A Invoice as the API answers it. */
export type InvoiceView = typeof InvoiceModel.static;
