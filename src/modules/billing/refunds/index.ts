import { Elysia } from "elysia";
import type { AppContext } from "../../../context";
import { errorResponses, IdParams } from "../../../http/common-model";
import { CursorPage } from "../../../http/pagination";
import { CreateRefundBody, RefundListQuery, RefundModel } from "./model";
import * as refundsService from "./service";

/** Refunds are the owner's. */
export const refundsController = ({ auth, idempotency, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/refunds", tags: ["billing"] as never })
    .use(auth)
    .use(idempotency)
    .guard({ auth: ["owner"] as const })
    .post("/", ({ actor, body, idempotently }) => idempotently(actor.clinicId, body, (db) => refundsService.createRefund({ ...services, db }, actor.clinicId, body)), {
      body: CreateRefundBody,
      response: { 200: RefundModel, 201: RefundModel, ...errorResponses(400, 401, 403, 409, 422) },
      detail: { "x-idempotent": true, summary: "Refund part or all of a payment (owner; Idempotency-Key accepted)" },
    })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, refundsService.refundRecords.keyset);
        const result = await refundsService.listRefunds(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, refundsService.refundRecords.keyset, refundsService.refundView);
      },
      { query: RefundListQuery, response: { 200: CursorPage(RefundModel), ...errorResponses(400, 401, 403, 422) } },
    )
    .get("/:id", ({ actor, params }) => refundsService.getRefund(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: RefundModel, ...errorResponses(401, 403, 404, 422) },
    });
