import { t } from "elysia";
import { Nullable, NullableString, NullableTimestamp, OptionalNullable, Timestamp, UpdateBody, Uuid } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";

const EventName = t.String({ pattern: "^([a-z_]+\\.[a-z_]+|\\*)$", maxLength: 100, description: "An action such as invoice.emitted, or * for all", examples: ["invoice.emitted"] });

export const CreateWebhookBody = t.Object({
  url: t.String({ minLength: 1, maxLength: 2000, examples: ["https://n8n.example.com/webhook/clinic"] }),
  events: t.Array(EventName, { minItems: 1, maxItems: 100, uniqueItems: true, examples: [["invoice.emitted", "payment.created"]] }),
  description: OptionalNullable(t.String({ maxLength: 500 })),
  enabled: t.Optional(t.Boolean({ default: true })),
});
export type CreateWebhookInput = typeof CreateWebhookBody.static;

export const UpdateWebhookBody = UpdateBody(CreateWebhookBody);
export type UpdateWebhookInput = typeof UpdateWebhookBody.static;

export const WebhookModel = t.Object({
  id: Uuid,
  url: t.String(),
  description: NullableString(),
  events: t.Array(t.String()),
  enabled: t.Boolean(),
  disabled_reason: NullableString({ description: "Why the service disabled it (410 from the receiver, or every retry failed)" }),
  previous_secret_expires_at: Nullable(Timestamp, { description: "Until then the secret before the last rotation signs too" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** Creation and rotation show the secret, once. */
export const WebhookWithSecretModel = t.Composite([WebhookModel, t.Object({ secret: t.String({ pattern: "^whsec_[A-Za-z0-9+/=]+$" }) })]);

export const WebhookListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });
/** Deliveries are an attempt log, newest first, not records that change: no delta sync. */
export const DeliveryListQuery = t.Object({ ...cursorQueryFields });

export const DeliveryModel = t.Object({
  id: Uuid,
  webhook_id: Uuid,
  event_id: Uuid,
  event_type: t.String(),
  state: t.Union([t.Literal("pending"), t.Literal("succeeded"), t.Literal("failed")]),
  attempts: t.Integer(),
  status_code: Nullable(t.Integer()),
  duration_ms: Nullable(t.Integer()),
  error: NullableString(),
  last_attempt_at: NullableTimestamp,
  next_attempt_at: NullableTimestamp,
  created_at: Timestamp,
});

export const AttemptModel = t.Object({
  attempt: t.Integer({ description: "1 for the first attempt; an attempt that could not be sent repeats the number of the one that follows it" }),
  attempted_at: Timestamp,
  status_code: Nullable(t.Integer(), { description: "What the receiver answered; null when it did not answer" }),
  duration_ms: Nullable(t.Integer()),
  error: NullableString({ description: "Why the attempt failed; null when it succeeded" }),
});

/** A delivery with every attempt, newest first. */
export const DeliveryDetailModel = t.Composite([DeliveryModel, t.Object({ attempt_log: t.Array(AttemptModel) })]);
