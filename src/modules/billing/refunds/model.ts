import { t } from "elysia";
import { DateFilters, Money, NullableString, OptionalNullable, Timestamp, Uuid } from "../../../http/common-model";
import { cursorQueryFields } from "../../../http/pagination";
import { record } from "../record-model";

export const RefundModel = t.Object({ ...record, payment_id: Uuid, invoice_id: Uuid, amount: t.Integer(), currency: t.String(), reason: NullableString(), refunded_at: Timestamp });
export const CreateRefundBody = t.Object({
  payment_id: Uuid,
  amount: Money({ minimum: 1 }),
  reason: OptionalNullable(t.String({ maxLength: 500 })),
});
export const RefundListQuery = t.Object({ ...cursorQueryFields, ...DateFilters, payment_id: t.Optional(Uuid), invoice_id: t.Optional(Uuid) });

export type CreateRefundInput = typeof CreateRefundBody.static;

/** The models of the three routes, for the ledger-resource factory. */
export const refundModels = { item: RefundModel, create: CreateRefundBody, listQuery: RefundListQuery };

/** A refund as the API answers it. */
export type RefundView = typeof RefundModel.static;
