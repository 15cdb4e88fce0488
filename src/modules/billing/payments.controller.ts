import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage } from "../../http/pagination";
import { CreatePaymentBody, CreateRefundBody, PaymentListQuery, PaymentModel, RefundListQuery, RefundModel } from "./model";
import * as paymentsService from "./payments.service";


export const paymentsController = ({ auth, idempotency, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/payments", tags: ["billing"] as never })
    .use(auth)
    .use(idempotency)
    .guard({ auth: true })
    .post("/", ({ actor, body, idempotently }) => idempotently(actor.clinicId, body, (db) => paymentsService.createPayment({ ...services, db }, actor.clinicId, body)), {
      body: CreatePaymentBody,
      response: { 200: PaymentModel, 201: PaymentModel, ...errorResponses(400, 401, 409, 422) },
      detail: { "x-idempotent": true, summary: "Pay an emitted invoice, up to its balance (Idempotency-Key accepted)" },
    })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, paymentsService.paymentRecords.keyset);
        const result = await paymentsService.listPayments(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, paymentsService.paymentRecords.keyset, paymentsService.paymentView);
      },
      { query: PaymentListQuery, response: { 200: CursorPage(PaymentModel), ...errorResponses(400, 401, 422) } },
    )
    .get("/:id", ({ actor, params }) => paymentsService.getPayment(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: PaymentModel, ...errorResponses(401, 404, 422) },
    });

/** Refunds are the owner's. */
export const refundsController = ({ auth, idempotency, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/refunds", tags: ["billing"] as never })
    .use(auth)
    .use(idempotency)
    .guard({ auth: ["owner"] as const })
    .post("/", ({ actor, body, idempotently }) => idempotently(actor.clinicId, body, (db) => paymentsService.createRefund({ ...services, db }, actor.clinicId, body)), {
      body: CreateRefundBody,
      response: { 200: RefundModel, 201: RefundModel, ...errorResponses(400, 401, 403, 409, 422) },
      detail: { "x-idempotent": true, summary: "Refund part or all of a payment (owner; Idempotency-Key accepted)" },
    })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, paymentsService.refundRecords.keyset);
        const result = await paymentsService.listRefunds(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, paymentsService.refundRecords.keyset, paymentsService.refundView);
      },
      { query: RefundListQuery, response: { 200: CursorPage(RefundModel), ...errorResponses(400, 401, 403, 422) } },
    )
    .get("/:id", ({ actor, params }) => paymentsService.getRefund(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: RefundModel, ...errorResponses(401, 403, 404, 422) },
    });
