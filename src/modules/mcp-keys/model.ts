import { t } from "elysia";
import { DateOnly, Nullable, NullableString, NullableTimestamp, OptionalNullable, StrictInteger, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, orderQueryField, updatedSinceQueryField } from "../../http/pagination";

export const Scope = t.Union([t.Literal("read"), t.Literal("query"), t.Literal("clinic_context")]);

export const CreateKeyBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 100, examples: ["Claude Desktop"] }),
  scopes: t.Array(Scope, { minItems: 1, maxItems: 3, uniqueItems: true, examples: [["read", "query"]] }),
  rate_limit_per_day: t.Optional(StrictInteger({ minimum: 1, maximum: 1_000_000, default: 1000 })),
  expires_at: OptionalNullable(Timestamp),
});

export const ApiKeyModel = t.Object({
  id: Uuid,
  name: t.String(),
  key_prefix: t.String(),
  scopes: t.Array(t.String()),
  rate_limit_per_day: t.Integer(),
  burst_per_minute: t.Integer(),
  expires_at: NullableTimestamp,
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
});

/** Only creation and rotation show the value, once. */
export const ApiKeyWithSecretModel = t.Composite([ApiKeyModel, t.Object({ api_key: t.String({ pattern: "^svc_[A-Za-z0-9]{32}$" }) })]);

export const KeyListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export const UsageQuery = t.Object({
  ...cursorQueryFields,
  ...orderQueryField,
  api_key_id: t.Optional(Uuid),
  tool: t.Optional(t.String({ maxLength: 100 })),
  outcome: t.Optional(t.String({ pattern: "^(ok|blocked|error|denied|rate_limited)(,(ok|blocked|error|denied|rate_limited))*$" })),
  date_from: t.Optional(DateOnly),
  date_to: t.Optional(DateOnly),
});

export const UsageRowModel = t.Object({
  id: Uuid,
  api_key_id: Uuid,
  tool: t.String(),
  status_code: t.Integer(),
  outcome: t.String(),
  reason: NullableString(),
  sql_text: NullableString(),
  rows_returned: Nullable(t.Integer()),
  duration_ms: t.Integer(),
  request_id: NullableString(),
  created_at: Timestamp,
});

export const SummaryQuery = t.Object({ date: t.Optional(DateOnly) });

export const SummaryModel = t.Object({
  date: t.String({ description: "UTC day, as quota days are" }),
  keys: t.Array(
    t.Object({
      api_key_id: Uuid,
      name: t.String(),
      key_prefix: t.String(),
      rate_limit_per_day: t.Integer(),
      quota_used: t.Integer({ description: "Calls counted against the daily quota" }),
      calls: t.Integer({ description: "Usage-log rows, 429s included" }),
      tools: t.Array(t.Object({ tool: t.String(), calls: t.Integer(), outcomes: t.Record(t.String(), t.Integer()) })),
    }),
  ),
});

export const DailyQuery = t.Object({
  days: t.Optional(t.Integer({ minimum: 1, maximum: 90, default: 30, description: "How many UTC days, ending today" })),
  api_key_id: t.Optional(Uuid),
});

const OutcomeCounts = t.Object({ ok: t.Integer(), blocked: t.Integer(), denied: t.Integer(), rate_limited: t.Integer(), error: t.Integer() });

export const DailyModel = t.Object({
  from: t.String({ description: "First UTC day" }),
  to: t.String({ description: "Last UTC day (today)" }),
  days: t.Array(t.Composite([t.Object({ date: t.String() }), OutcomeCounts]), { description: "Every day of the range, oldest first, zeros included" }),
  tools: t.Array(t.Composite([t.Object({ tool: t.String(), calls: t.Integer() }), OutcomeCounts]), { description: "Calls per tool over the range, most called first" }),
});

export type CreateKeyInput = typeof CreateKeyBody.static;
export type UsageFilters = typeof UsageQuery.static;
export type ApiKeyView = typeof ApiKeyModel.static;
export type ApiKeyWithSecretView = typeof ApiKeyWithSecretModel.static;
export type UsageRowView = typeof UsageRowModel.static;
