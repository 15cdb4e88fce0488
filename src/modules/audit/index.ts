import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { CursorPage } from "../../http/pagination";
import { AuditQuery, EventModel } from "./model";
import { EVENT_KEYSET, eventView, listEvents } from "./service";

/** The audit trail: who changed what, the owner's to read. */
export const auditModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/audit", tags: ["audit"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .get(
      "/",
      ({ actor, query }) => paginator.list({ ...query, order: "desc" }, EVENT_KEYSET, (page) => listEvents(services, actor.clinicId, actor.clinic.timezone, query, page), eventView),
      { query: AuditQuery, response: { 200: CursorPage(EventModel), ...errorResponses(400, 401, 403, 422) }, detail: { summary: "The audit trail, newest first; filters entity_type, entity_id, actor_id, action (comma list), date_from/date_to (clinic's days)" } },
    );
