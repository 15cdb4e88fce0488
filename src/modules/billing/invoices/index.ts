import { Elysia } from "elysia";
import type { AppContext } from "../../../context";
import { errorResponses, IdParams } from "../../../http/common-model";
import { CursorPage, withDeletedAt } from "../../../http/pagination";
import type { SiiSettings } from "../sii/settings";
import { CreateInvoiceBody, InvoiceListQuery, InvoiceModel, UpdateInvoiceBody, VoidInvoiceBody } from "./model";
import * as invoicesService from "./service";

const created = { 200: InvoiceModel, 201: InvoiceModel };

export const invoicesController = ({ auth, idempotency, services, paginator }: AppContext, settings: SiiSettings) =>
  new Elysia({ prefix: "/invoices", tags: ["billing"] as never })
    .use(auth)
    .use(idempotency)
    .guard({ auth: true })
    .post("/", ({ actor, body, idempotently }) => idempotently(actor.clinicId, body, (db) => invoicesService.createInvoice({ ...services, db }, actor.clinic, body)), {
      body: CreateInvoiceBody,
      response: { ...created, ...errorResponses(400, 401, 409, 422) },
      detail: { "x-idempotent": true, summary: "Create a draft invoice (Idempotency-Key accepted)" },
    })
    .get(
      "/",
      ({ actor, query }) =>
        paginator.records(query, { keyset: invoicesService.invoiceRecords.keyset, page: (page) => invoicesService.listInvoices(services, actor.clinicId, actor.clinic.timezone, query, page), changes: invoicesService.invoiceRecords.changes, changedSince: (since, page) => invoicesService.invoiceRecords.changedSince(services, actor.clinicId, since, page) }, (row) => invoicesService.invoiceView(row)),
      { query: InvoiceListQuery, response: { 200: CursorPage(withDeletedAt(InvoiceModel)), ...errorResponses(400, 401, 422) }, detail: { summary: "List invoices (without items); filters status, tutor_id, date_from/date_to on emitted_at" } },
    )
    .get("/:id", ({ actor, params }) => invoicesService.getInvoice(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: InvoiceModel, ...errorResponses(401, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }) => invoicesService.updateInvoice(services, actor.clinic, params.id, body), {
      params: IdParams,
      body: UpdateInvoiceBody,
      response: { 200: InvoiceModel, ...errorResponses(401, 404, 409, 422) },
      detail: { summary: "Edit a draft; items replace the old ones" },
    })
    .post("/:id/emit", ({ actor, params, idempotently }) => idempotently(actor.clinicId, { action: "emit" }, (db) => invoicesService.emitInvoice({ ...services, db }, actor.clinicId, params.id), 200), {
      params: IdParams,
      response: { 200: InvoiceModel, ...errorResponses(400, 401, 404, 409, 422) },
      detail: { "x-idempotent": true, summary: "draft → emitted" },
    })
    .post(
      "/:id/void",
      ({ actor, params, body, idempotently }) => idempotently(actor.clinicId, { action: "void", ...body }, (db) => invoicesService.voidInvoice({ ...services, db }, settings, actor.clinicId, params.id, body ?? {}), 200),
      {
        params: IdParams,
        body: VoidInvoiceBody,
        response: { 200: InvoiceModel, ...errorResponses(400, 401, 404, 409, 422) },
        detail: { "x-idempotent": true, summary: "draft, or emitted without payments → void; with a factura or boleta only with {\"issue_credit_note\": true} (its 61 in the same transaction), else 409 TAX_DOCUMENT_ISSUED" },
      },
    );
