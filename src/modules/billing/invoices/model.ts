import { t } from "elysia";
import { INVOICE_STATUSES } from "../../../db/schema";
import { DateFilters, Money, Nullable, NullableString, NullableTimestamp, OptionalNullable, StrictInteger, UpdateBody, Uuid, ValueList } from "../../../http/common-model";
import { cursorQueryFields, orderQueryField, updatedSinceQueryField } from "../../../http/pagination";
import { record } from "../record-model";

const ItemInput = t.Object({
  description: t.String({ minLength: 1, maxLength: 300 }),
  quantity: StrictInteger({ minimum: 1, maximum: 100_000 }),
  unit_price: Money({ maximum: 10_000_000_000 }),
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
  balance: t.Integer({ description: "total_amount − paid_amount" }),
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
export const InvoiceListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField, ...orderQueryField, ...DateFilters, status: t.Optional(ValueList(INVOICE_STATUSES)), tutor_id: t.Optional(Uuid) });

export type CreateInvoiceInput = typeof CreateInvoiceBody.static;
export type UpdateInvoiceInput = typeof UpdateInvoiceBody.static;

/** A Invoice as the API answers it. */
export type InvoiceView = typeof InvoiceModel.static;
