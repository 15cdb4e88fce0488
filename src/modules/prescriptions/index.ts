import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { CLINICAL_WRITERS } from "../notes/model";
import { CancelPrescriptionBody, CreatePrescriptionBody, PrescriptionListQuery, PrescriptionModel } from "./model";
import * as service from "./service";

/** Prescriptions: issued by a vet or the owner, never edited, cancelled with a reason. */
export const prescriptionsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ tags: ["prescriptions"] as never })
    .use(auth)
    .post("/patients/:id/prescriptions", async ({ actor, params, body, status }) => status(201, await service.create(services, actor, params.id, body)), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: CreatePrescriptionBody,
      response: { 201: PrescriptionModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Issue a prescription (never edited afterwards)" },
    })
    .get(
      "/patients/:id/prescriptions",
      ({ actor, params, query }) =>
        query.updated_since !== undefined
          ? paginator.changes(query, service.prescriptionRecords.changes, (since, page) => service.changesForPatient(services, actor.clinicId, params.id, since, page), service.view)
          : paginator.list(query, service.prescriptionRecords.keyset, (page) => service.listForPatient(services, actor.clinicId, params.id, page), service.view),
      {
        auth: true,
        params: IdParams,
        query: PrescriptionListQuery,
        response: { 200: CursorPage(withDeletedAt(PrescriptionModel)), ...errorResponses(400, 401, 404, 422) },
        detail: { summary: "A patient's prescriptions, oldest first, cancelled ones included" },
      },
    )
    .get("/prescriptions/:id", async ({ actor, params }) => service.view(await service.prescriptionRecords.find(services, actor.clinicId, params.id)), {
      auth: true,
      params: IdParams,
      response: { 200: PrescriptionModel, ...errorResponses(401, 404, 422) },
    })
    .post("/prescriptions/:id/cancel", ({ actor, params, body }) => service.cancel(services, actor, params.id, body.reason), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: CancelPrescriptionBody,
      response: { 200: PrescriptionModel, ...errorResponses(401, 403, 404, 409, 422) },
      detail: { summary: "Cancel a prescription with a reason (who and when are recorded)" },
    });
