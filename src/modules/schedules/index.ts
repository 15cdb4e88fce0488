import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { ClosureModel, ClosurePage, CreateClosureBody, CreateTimeOffBody, ItemParams, ListQuery, TimeOffModel, TimeOffPage, UserItemParams, UserParams, WorkingHoursBody, WorkingHoursModel } from "./model";
import * as service from "./service";

/** Who works when: weekly hours and time off per person, and the days the clinic is closed. */
export const schedulesModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ tags: ["schedules"] as never })
    .use(auth)
    .get("/users/:id/working-hours", ({ actor, params }) => service.getWorkingHours(services, actor.clinicId, params.id), {
      auth: true,
      params: UserParams,
      response: { 200: WorkingHoursModel, ...errorResponses(401, 404, 422) },
      detail: { summary: "A person's weekly hours (the clinic's opening hours until set)" },
    })
    .put(
      "/users/:id/working-hours",
      ({ actor, params, body }) => {
        service.assertMayManage(actor, params.id);
        return service.putWorkingHours(services, actor.clinicId, params.id, body.intervals);
      },
      {
        auth: true,
        params: UserParams,
        body: WorkingHoursBody,
        response: { 200: WorkingHoursModel, ...errorResponses(401, 403, 404, 422) },
        detail: { summary: "Set a person's weekly hours in the clinic's local time (owner, or the person)" },
      },
    )
    .get(
      "/users/:id/time-off",
      ({ actor, params, query }) =>
        paginator.records(
          query,
          {
            keyset: service.timeOffRecords.keyset,
            page: (page) => service.listTimeOff(services, actor.clinicId, params.id, page),
            changes: service.timeOffRecords.changes,
            changedSince: (since, page) => service.timeOffChanges(services, actor.clinicId, params.id, since, page),
          },
          service.timeOffView,
        ),
      { auth: true, params: UserParams, query: ListQuery, response: { 200: TimeOffPage, ...errorResponses(400, 401, 404, 422) }, detail: { summary: "A person's time off (updated_since: the changes, removed entries included)" } },
    )
    .post(
      "/users/:id/time-off",
      async ({ actor, params, body, status }) => {
        service.assertMayManage(actor, params.id);
        return status(201, await service.addTimeOff(services, actor.clinicId, params.id, body));
      },
      {
        auth: true,
        params: UserParams,
        body: CreateTimeOffBody,
        response: { 201: TimeOffModel, ...errorResponses(401, 403, 404, 422) },
        detail: { summary: "Add time off (owner, or the person); no slot is offered inside it" },
      },
    )
    .delete(
      "/users/:id/time-off/:itemId",
      async ({ actor, params, status }) => {
        service.assertMayManage(actor, params.id);
        await service.removeTimeOff(services, actor.clinicId, params.id, params.itemId);
        return status(204, undefined);
      },
      { auth: true, params: UserItemParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) }, detail: { summary: "Remove time off (owner, or the person)" } },
    )
    .get(
      "/clinic/closures",
      ({ actor, query }) =>
        paginator.records(
          query,
          { keyset: service.closureRecords.keyset, page: (page) => service.listClosures(services, actor.clinicId, page), changes: service.closureRecords.changes, changedSince: (since, page) => service.closureChanges(services, actor.clinicId, since, page) },
          service.closureView,
        ),
      {
        auth: true,
        query: ListQuery,
        response: { 200: ClosurePage, ...errorResponses(400, 401, 422) },
        detail: { summary: "Days the clinic is closed (updated_since: the changes, reopened days included)" },
      },
    )
    .post("/clinic/closures", async ({ actor, body, status }) => status(201, await service.addClosure(services, actor.clinicId, body)), {
      auth: ["owner"] as const,
      body: CreateClosureBody,
      response: { 201: ClosureModel, ...errorResponses(401, 403, 409, 422) },
      detail: { summary: "Close the clinic for a whole day (owner); no slot is offered that day" },
    })
    .delete(
      "/clinic/closures/:id",
      async ({ actor, params, status }) => {
        await service.removeClosure(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { auth: ["owner"] as const, params: ItemParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) }, detail: { summary: "Reopen a closed day (owner)" } },
    );
