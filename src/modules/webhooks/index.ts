import { Elysia, t } from "elysia";
import { DEFAULT_WEBHOOK_MAX_ENDPOINTS } from "../../config";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { CreateWebhookBody, DeliveryDetailModel, DeliveryListQuery, DeliveryModel, UpdateWebhookBody, WebhookListQuery, WebhookModel, WebhookWithSecretModel } from "./model";
import * as webhooks from "./service";

/** Webhooks: the clinic owner's. */
export const webhooksModule = ({ auth, services, paginator, webhooks: runtime, secrets, database, config }: AppContext) => {
  const ctx: webhooks.WebhookServiceContext = { ...services, secrets, destinations: runtime.destinations, notify: () => database.notify(webhooks.DELIVERY_CHANNEL, ""), maxEndpoints: config.webhooks.maxEndpoints ?? DEFAULT_WEBHOOK_MAX_ENDPOINTS };
  const scheduleLength = config.webhooks.retryScheduleMs.length;
  return new Elysia({ prefix: "/webhooks", tags: ["webhooks"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .post("/", async ({ actor, body, status }) => status(201, await webhooks.createWebhook(ctx, actor.clinicId, body)), {
      body: CreateWebhookBody,
      response: { 201: WebhookWithSecretModel, ...errorResponses(401, 403, 409, 422) },
      detail: {
        summary: "Add a webhook; its signing secret is shown only in this response. Private, loopback and link-local destinations are refused (422) unless in WEBHOOK_ALLOWED_NETWORKS; a clinic has at most WEBHOOK_MAX_ENDPOINTS webhooks (409 beyond)",
      },
    })
    .get("/", ({ actor, query }) =>
      paginator.records(query, { keyset: webhooks.WEBHOOK_KEYSET, page: (page) => webhooks.listWebhooks(services, actor.clinicId, page), changes: webhooks.WEBHOOK_CHANGES, changedSince: (since, page) => webhooks.webhookChanges(services, actor.clinicId, since, page) }, webhooks.webhookView), {
      query: WebhookListQuery,
      response: { 200: CursorPage(withDeletedAt(WebhookModel)), ...errorResponses(400, 401, 403, 422) },
    })
    .get("/:id", ({ actor, params }) => webhooks.getWebhook(services, actor.clinicId, params.id), { params: IdParams, response: { 200: WebhookModel, ...errorResponses(401, 403, 404, 422) } })
    .patch("/:id", ({ actor, params, body }) => webhooks.updateWebhook(ctx, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateWebhookBody,
      response: { 200: WebhookModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Change a webhook; enabling it again clears the reason it was disabled" },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await webhooks.removeWebhook(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) } },
    )
    .post("/:id/rotate-secret", ({ actor, params }) => webhooks.rotateSecret(ctx, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: WebhookWithSecretModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "A new signing secret, shown once; the previous one keeps signing beside it for 24 hours" },
    })
    .post("/:id/test", async ({ actor, params, status }) => status(202, await webhooks.sendTest(ctx, actor.clinicId, params.id)), {
      params: IdParams,
      response: { 202: DeliveryModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Send a webhook.test event to this webhook" },
    })
    .get(
      "/:id/deliveries",
      ({ actor, params, query }) =>
        paginator.list({ ...query, order: "desc" }, webhooks.DELIVERY_KEYSET, (page) => webhooks.listDeliveries(services, actor.clinicId, params.id, page), webhooks.deliveryView),
      { params: IdParams, query: DeliveryListQuery, response: { 200: CursorPage(DeliveryModel), ...errorResponses(400, 401, 403, 404, 422) }, detail: { summary: "Deliveries to this webhook, newest first, each with its latest attempt" } },
    )
    .get("/deliveries/:id/attempts", ({ actor, params }) => webhooks.getDelivery(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: DeliveryDetailModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "One delivery with every attempt (status code, duration, error, when), newest first" },
    })
    .post("/deliveries/:id/retry", async ({ actor, params, status }) => status(202, await webhooks.retryDelivery(ctx, actor.clinicId, params.id, scheduleLength)), {
      params: IdParams,
      response: { 202: DeliveryModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Send one delivery again now" },
    });
};
