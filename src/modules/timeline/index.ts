import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage } from "../../http/pagination";
import { TimelineItemModel, TimelineQuery } from "./model";
import * as service from "./service";

/** A patient's whole history in one list, newest first. */
export const timelineModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ tags: ["timeline"] as never })
    .use(auth)
    .get(
      "/patients/:id/timeline",
      // Always newest first: the cursor is bound to that direction.
      ({ actor, params, query }) => paginator.list({ ...query, order: "desc" }, service.TIMELINE_KEYSET, (page) => service.timelinePage(services, actor.clinicId, params.id, query, page), service.entryView),
      {
        auth: true,
        params: IdParams,
        query: TimelineQuery,
        response: { 200: CursorPage(TimelineItemModel), ...errorResponses(400, 401, 404, 422) },
        detail: { summary: "The patient's timeline, newest first: visits, signed notes and addenda, vitals, vaccinations, prescriptions, invoices and the reminders sent (or stopped), each with its kind" },
      },
    );
