import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { PageResponse } from "../../http/pagination";
import { CreateAlertBody, AlertListQuery, AlertModel, UpdateAlertBody } from "./model";
import * as alertsService from "./service";

export const ALERT_LIST = { list: "alerts", sort: ["created_at:date", "id:text"] } as const;

export const alertsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/alerts", tags: ["alerts"] as never })
    .use(auth)
    .guard({ auth: true })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, ALERT_LIST);
        const result = await alertsService.listAlerts(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, ALERT_LIST, alertsService.alertView);
      },
      { query: AlertListQuery, response: { 200: PageResponse(AlertModel), ...errorResponses(400, 401, 422) }, detail: { summary: "List alerts (cursor or offset form); filters status, kind, patient_id, date_from, date_to (due_date)" } },
    )
    .post("/", async ({ actor, body, status }) => status(201, await alertsService.createAlert(services, actor.clinicId, body)), {
      body: CreateAlertBody,
      response: { 201: AlertModel, ...errorResponses(401, 422) },
    })
    .get("/:id", ({ actor, params }) => alertsService.getAlert(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: AlertModel, ...errorResponses(401, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }) => alertsService.updateAlert(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateAlertBody,
      response: { 200: AlertModel, ...errorResponses(401, 404, 422) },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await alertsService.deleteAlert(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 404, 422) } },
    );
