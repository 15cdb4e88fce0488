import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { PageResponse } from "../../http/pagination";
import { CreateVisitBody, VisitListQuery, VisitModel, UpdateVisitBody } from "./model";
import * as visitsService from "./service";

export const VISIT_LIST = { list: "visits", sort: ["created_at:date", "id:text"] } as const;

export const visitsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/visits", tags: ["visits"] as never })
    .use(auth)
    .guard({ auth: true })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, VISIT_LIST);
        const result = await visitsService.listVisits(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, VISIT_LIST, visitsService.visitView);
      },
      { query: VisitListQuery, response: { 200: PageResponse(VisitModel), ...errorResponses(400, 401, 422) }, detail: { summary: "List visits (cursor or offset form); filters status, date_from, date_to (scheduled_at), patient_id, vet_id" } },
    )
    .post("/", async ({ actor, body, status }) => status(201, await visitsService.createVisit(services, actor.clinicId, body)), {
      body: CreateVisitBody,
      response: { 201: VisitModel, ...errorResponses(401, 422) },
    })
    .get("/:id", ({ actor, params }) => visitsService.getVisit(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: VisitModel, ...errorResponses(401, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }) => visitsService.updateVisit(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateVisitBody,
      response: { 200: VisitModel, ...errorResponses(401, 404, 409, 422) },
      detail: { summary: "Update a visit; `status` drives the state machine (409 INVALID_STATE_TRANSITION)" },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await visitsService.deleteVisit(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 404, 422) } },
    );
