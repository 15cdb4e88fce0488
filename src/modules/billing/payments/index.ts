import { Elysia } from "elysia";
import type { AppContext } from "../../../context";
import { errorResponses, IdParams } from "../../../http/common-model";
import { CursorPage } from "../../../http/pagination";
import { CreatePaymentBody, PaymentListQuery, PaymentModel } from "./model";
import * as paymentsService from "./service";


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
