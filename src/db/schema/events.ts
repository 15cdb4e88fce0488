import { sql } from "drizzle-orm";
import { bigint, boolean, index, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestampColumn } from "./columns";

export const ACTOR_TYPES = ["user", "api_key", "connection", "system"] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/**
 * The event log: one row per change, written by the audit trigger in the transaction of the
 * change (so a rollback takes it away). Ids are UUIDv7 made from `occurred_at`.
 */
export const events = pgTable(
  "events",
  {
    id: uuid("id").primaryKey(),
    /** The order events were written in: one transaction's events share `occurred_at` (its clock reading). */
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity().notNull(),
    clinic_id: uuid("clinic_id").notNull(),
    occurred_at: timestampColumn("occurred_at").notNull(),
    actor_type: text("actor_type").$type<ActorType>().notNull(),
    actor_id: text("actor_id"),
    actor_name: text("actor_name"),
    /** Dotted and past tense: `invoice.emitted`. */
    action: text("action").notNull(),
    entity_type: text("entity_type").notNull(),
    entity_id: uuid("entity_id").notNull(),
    /**
     * What the event says beyond its fields: the thin data of a time-based event (`vaccination.due`),
     * `{field: {from, to}}` on events written before the trigger kept `fields_before`/`fields_after`.
     * The trigger writes `{}` here; `eventChanges` gives the one view of all three.
     */
    changes: jsonb("changes").$type<Record<string, unknown>>().notNull(),
    /** The changed fields' old values (updates only), sensitive fields left out. */
    fields_before: jsonb("fields_before").$type<Record<string, unknown>>(),
    /** The changed fields' new values (every non-null field on creation), sensitive fields left out. */
    fields_after: jsonb("fields_after").$type<Record<string, unknown>>(),
    /** Sensitive fields (hashes, keys, tokens, certificates) that changed, named without values. */
    redacted_fields: text("redacted_fields").array(),
    request_id: text("request_id"),
  },
  (t) => [
    index("events_clinic_occurred_idx").on(t.clinic_id, t.occurred_at, t.seq),
    index("events_clinic_entity_idx").on(t.clinic_id, t.entity_type, t.entity_id),
    index("events_clinic_actor_idx").on(t.clinic_id, t.actor_id),
    // The audit's action filter: a rare action is found without reading the clinic's other events.
    index("events_clinic_action_idx").on(t.clinic_id, t.action, t.occurred_at, t.seq),
  ],
);

/** A receiver of the clinic's events. The signing secrets are stored encrypted (src/lib/secrets). */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id").notNull(),
    url: text("url").notNull(),
    description: text("description"),
    /** Actions it receives, or `*`. */
    events: text("events").array().notNull(),
    enabled: boolean("enabled").notNull().default(true),
    /** Why it was disabled by the service (410, retries exhausted); null when enabled or disabled by a person. */
    disabled_reason: text("disabled_reason"),
    secret_encrypted: text("secret_encrypted").notNull(),
    /** The secret before the last rotation, which keeps signing beside the new one until `previous_secret_expires_at`. */
    previous_secret_encrypted: text("previous_secret_encrypted"),
    previous_secret_expires_at: timestampColumn("previous_secret_expires_at"),
    created_at: timestampColumn("created_at").notNull(),
    updated_at: timestampColumn("updated_at").notNull(),
    deleted_at: timestampColumn("deleted_at"),
  },
  // Deleted ones too: delta sync reads the clinic's endpoints, deleted ones included, through it.
  (t) => [index("webhook_endpoints_clinic_created_idx").on(t.clinic_id, t.created_at, t.id)],
);

export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * One event to one endpoint, with its latest attempt (every attempt is in `webhook_attempts`). A dispatcher claims a due row by setting
 * `claimed_until` (a lease longer than the request timeout), so no two send the same attempt.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id").notNull(),
    endpoint_id: uuid("endpoint_id").notNull(),
    event_id: uuid("event_id").notNull(),
    state: text("state").$type<DeliveryState>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    next_attempt_at: timestampColumn("next_attempt_at"),
    claimed_until: timestampColumn("claimed_until"),
    last_attempt_at: timestampColumn("last_attempt_at"),
    last_status_code: integer("last_status_code"),
    last_duration_ms: integer("last_duration_ms"),
    last_error: text("last_error"),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [
    index("webhook_deliveries_due_idx").on(t.next_attempt_at).where(sql`${t.state} = 'pending'`),
    index("webhook_deliveries_endpoint_idx").on(t.endpoint_id, t.created_at, t.id),
    /** Each endpoint's next due deliveries, for claims that take endpoints in turn. */
    index("webhook_deliveries_endpoint_due_idx").on(t.endpoint_id, t.next_attempt_at, t.id).where(sql`${t.state} = 'pending'`),
    /** The attempts in flight (live claims), counted per endpoint and clinic by every claim. */
    index("webhook_deliveries_claimed_idx").on(t.claimed_until).where(sql`${t.claimed_until} is not null`),
  ],
);

/** Every attempt of a delivery: what the receiver answered (or the error), how long it took, when. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id").notNull(),
    delivery_id: uuid("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    /** 1 for the first attempt; a resend by hand continues the count. */
    attempt: integer("attempt").notNull(),
    attempted_at: timestampColumn("attempted_at").notNull(),
    status_code: integer("status_code"),
    duration_ms: integer("duration_ms"),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.delivery_id, t.attempted_at, t.id)],
);
