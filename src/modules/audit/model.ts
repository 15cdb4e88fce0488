import { t } from "elysia";
import { DateFilters, NullableString, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields } from "../../http/pagination";

const ACTION = "[a-z_]+\\.[a-z_]+";

export const AuditQuery = t.Object({
  ...cursorQueryFields,
  entity_type: t.Optional(t.String({ pattern: "^[a-z_]+$", maxLength: 50, examples: ["invoice"] })),
  entity_id: t.Optional(Uuid),
  actor_id: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "The user, API key or connection id" })),
  action: t.Optional(t.String({ pattern: `^${ACTION}(,${ACTION})*$`, maxLength: 1000, description: "Comma list of actions", examples: ["invoice.emitted,invoice.voided"] })),
  ...DateFilters,
});
export type AuditFilters = typeof AuditQuery.static;

export const ActorModel = t.Object({
  type: t.Union([t.Literal("user"), t.Literal("api_key"), t.Literal("connection"), t.Literal("system")]),
  id: NullableString(),
  name: NullableString(),
});

export const EventModel = t.Object({
  id: Uuid,
  occurred_at: Timestamp,
  actor: ActorModel,
  action: t.String({ examples: ["invoice.emitted"] }),
  entity: t.Object({ type: t.String({ examples: ["invoice"] }), id: Uuid }),
  changes: t.Record(t.String(), t.Unknown(), { description: "{field: {from, to}} for the fields that changed; {to} on creation; sensitive fields only {redacted: true}" }),
  request_id: NullableString(),
});
