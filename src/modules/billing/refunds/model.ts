import { t } from "elysia";
import { DateFilters, Money, Nullable, NullableString, OptionalNullable, Timestamp, Uuid } from "../../../http/common-model";
import { cursorQueryFields } from "../../../http/pagination";
import { record } from "../record-model";

export const RefundModel = t.Object({ ...record, payment_id: Uuid, invoice_id: Uuid, amount: t.Integer(), currency: t.String(), reason: NullableString(), refunded_at: Timestamp, credit_note_id: Nullable(Uuid, { description: "The nota de crédito (61) issued with the refund, when the sale has a factura or boleta" }) });
export const CreateRefundBody = t.Object({
  payment_id: Uuid,
  amount: Money({ minimum: 1 }),
  reason: OptionalNullable(t.String({ maxLength: 500, description: "Also the nota de crédito's RazonRef (its first 90 characters) when the sale has a factura or boleta" })),
});
export const RefundListQuery = t.Object({ ...cursorQueryFields, ...DateFilters, payment_id: t.Optional(Uuid), invoice_id: t.Optional(Uuid) });

export type CreateRefundInput = typeof CreateRefundBody.static;

/** The models of the three routes, for the ledger-resource factory. */
export const refundModels = { item: RefundModel, create: CreateRefundBody, listQuery: RefundListQuery };

/** A refund as the API answers it. */
export type RefundView = typeof RefundModel.static;
