import { t } from "elysia";
import { PAYMENT_METHODS } from "../../../db/schema";
import { DateFilters, Money, NullableString, OptionalNullable, Timestamp, Uuid, ValueList } from "../../../http/common-model";
import { cursorQueryFields, orderQueryField } from "../../../http/pagination";
import { record } from "../record-model";

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
  reference: OptionalNullable(t.String({ maxLength: 200 })),
});
export const PaymentListQuery = t.Object({ ...cursorQueryFields, ...orderQueryField, ...DateFilters, invoice_id: t.Optional(Uuid), method: t.Optional(ValueList(PAYMENT_METHODS)) });

export type CreatePaymentInput = typeof CreatePaymentBody.static;

/** The models of the three routes, for the ledger-resource factory. */
export const paymentModels = { item: PaymentModel, create: CreatePaymentBody, listQuery: PaymentListQuery };

/** A Payment as the API answers it. */
export type PaymentView = typeof PaymentModel.static;
