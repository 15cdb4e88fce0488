import { Elysia } from "elysia";
import type { AppContext } from "../../../context";
import { errorResponses, IdParams } from "../../../http/common-model";
import { CursorPage } from "../../../http/pagination";
import { CreateTaxDocumentBody, TaxDocumentListQuery, TaxDocumentModel } from "./model";
import * as sii from "./service";


export const siiController = ({ auth, idempotency, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/sii/documents", tags: ["billing"] as never })
    .use(auth)
    .use(idempotency)
    .guard({ auth: true })
    .post("/", ({ actor, body, idempotently }) => idempotently(actor.clinicId, body, (db) => sii.issueTaxDocument({ ...services, db }, actor.clinicId, body)), {
      body: CreateTaxDocumentBody,
      response: { 200: TaxDocumentModel, 201: TaxDocumentModel, ...errorResponses(400, 401, 409, 422) },
      detail: { "x-idempotent": true, summary: "Issue a 33, 39 or 61 with the next folio (Idempotency-Key accepted)" },
    })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, sii.taxDocumentRecords.keyset);
        const result = await sii.listTaxDocuments(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, sii.taxDocumentRecords.keyset, sii.taxDocumentView);
      },
      { query: TaxDocumentListQuery, response: { 200: CursorPage(TaxDocumentModel), ...errorResponses(400, 401, 422) } },
    )
    .get("/:id", ({ actor, params }) => sii.getTaxDocument(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: TaxDocumentModel, ...errorResponses(401, 404, 422) },
    });
