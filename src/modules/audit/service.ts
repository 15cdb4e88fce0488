import { eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { pageOf, withinDays } from "../../db/clinic-records";
import { keyset, type PageRequest } from "../../db/keyset";
import { events } from "../../db/schema";
import { rfc3339 } from "../../lib/time";
import { eventChanges } from "./changes";
import type { AuditFilters } from "./model";

type EventRow = typeof events.$inferSelect;

export const EVENT_KEYSET = keyset<EventRow>("audit", [events.occurred_at, events.seq]);

/** The clinic's events, newest first, by entity, actor, action and day in the clinic's time zone. */
export function listEvents(ctx: ServiceContext, clinicId: string, timeZone: string, filters: AuditFilters, page: PageRequest) {
  const conditions = [
    eq(events.clinic_id, clinicId),
    filters.entity_type ? eq(events.entity_type, filters.entity_type) : undefined,
    filters.entity_id ? eq(events.entity_id, filters.entity_id) : undefined,
    filters.actor_id ? eq(events.actor_id, filters.actor_id) : undefined,
    filters.action ? inArray(events.action, filters.action.split(",")) : undefined,
    ...withinDays(events.occurred_at, filters, timeZone),
  ];
  return pageOf(ctx.db, events, conditions, page, EVENT_KEYSET);
}

export type EventView = ReturnType<typeof eventView>;

export const eventView = (row: EventRow) => ({
  id: row.id,
  occurred_at: rfc3339(row.occurred_at),
  actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
  action: row.action,
  entity: { type: row.entity_type, id: row.entity_id },
  changes: eventChanges(row),
  request_id: row.request_id,
});
