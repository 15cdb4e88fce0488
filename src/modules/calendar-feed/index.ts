import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { assertMayManage } from "../schedules/service";
import { CreatedFeedModel, FeedParams, FeedStatusModel, FeedUserParams } from "./model";
import * as service from "./service";

/**
 * Each person's read-only iCalendar feed of the visits they attend: the owner or the person makes,
 * replaces or turns off its secret address; calendar apps read it without signing in.
 */
export const calendarFeedModule = ({ auth, services, config }: AppContext) =>
  new Elysia({ tags: ["calendar"] as never })
    .get(
      `${service.FEED_PATH}:token`,
      async ({ params }) => {
        const body = await service.feedCalendar(services, params.token.slice(0, -".ics".length));
        // The address is a secret: no shared cache keeps a copy of it or of what it answers.
        return new Response(body, { headers: { "content-type": "text/calendar; charset=utf-8", "cache-control": "no-store", "content-disposition": 'inline; filename="calendar.ics"' } });
      },
      {
        params: FeedParams,
        response: errorResponses(404, 422),
        detail: {
          summary: `A person's visits as an iCalendar feed (RFC 5545), from ${service.FEED_DAYS_BACK} days back to ${service.FEED_DAYS_AHEAD} days ahead; no sign-in, the token is the secret`,
          "x-media-type": "text/calendar",
        },
      },
    )
    .use(auth)
    .get("/users/:id/calendar-feed", ({ actor, params }) => {
      assertMayManage(actor, params.id);
      return service.feedStatus(services, actor.clinicId, params.id);
    }, {
      auth: true,
      params: FeedUserParams,
      response: { 200: FeedStatusModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Whether a person has a calendar feed (owner, or the person); its address is never shown again" },
    })
    .post(
      "/users/:id/calendar-feed",
      async ({ actor, params, request, status }) => {
        assertMayManage(actor, params.id);
        return status(201, await service.createFeed(services, actor.clinicId, params.id, config.publicUrl ?? new URL(request.url).origin));
      },
      {
        auth: true,
        params: FeedUserParams,
        response: { 201: CreatedFeedModel, ...errorResponses(401, 403, 404, 422) },
        detail: { summary: "Make a new secret address for a person's calendar feed (owner, or the person); the old address stops working at once" },
      },
    )
    .delete(
      "/users/:id/calendar-feed",
      async ({ actor, params, status }) => {
        assertMayManage(actor, params.id);
        await service.revokeFeed(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      {
        auth: true,
        params: FeedUserParams,
        response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) },
        detail: { summary: "Turn off a person's calendar feed (owner, or the person); its address answers 404" },
      },
    );
