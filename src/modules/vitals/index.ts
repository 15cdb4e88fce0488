import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { CLINICAL_WRITERS } from "../notes/model";
import { CreateVitalsBody, VitalsListQuery, VitalsModel } from "./model";
import * as service from "./service";

/** A patient's vitals over time; each weight keeps the patient's `weight_grams` in step. */
export const vitalsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/patients/:id/vitals", tags: ["vitals"] as never })
    .use(auth)
    .post("/", async ({ actor, params, body, status }) => status(201, await service.create(services, actor, params.id, body)), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: CreateVitalsBody,
      response: { 201: VitalsModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Record vitals (at least one measurement, each within its plausible range)" },
    })
    .get("/", ({ actor, params, query }) =>
      query.updated_since !== undefined
        ? paginator.changes(query, service.vitalsRecords.changes, (since, page) => service.changesForPatient(services, actor.clinicId, params.id, since, page), service.view)
        : paginator.list(query, service.VITALS_KEYSET, (page) => service.list(services, actor.clinicId, params.id, page), service.view), {
      auth: true,
      params: IdParams,
      query: VitalsListQuery,
      response: { 200: CursorPage(withDeletedAt(VitalsModel)), ...errorResponses(400, 401, 404, 422) },
      detail: { summary: "A patient's vitals by the time they were measured (order=desc: latest first)" },
    });
