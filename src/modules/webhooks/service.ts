import { and, desc, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { changedSince, changesKeyset, pageOf } from "../../db/clinic-records";
import { keyset, type PageRequest } from "../../db/keyset";
import { events, webhookAttempts, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { DAY } from "../../lib/clock";
import { newId } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import type { SecretBox } from "../../lib/secrets";
import { rfc3339 } from "../../lib/time";
import type { DestinationPolicy } from "./destination";
import { DELIVERY_CHANNEL } from "./dispatcher";
import type { CreateWebhookInput, UpdateWebhookInput } from "./model";
import { newWebhookSecret } from "./signing";

export interface WebhookServiceContext extends ServiceContext {
  secrets: SecretBox;
  /** Webhooks one clinic may have. */
  maxEndpoints: number;
  destinations: DestinationPolicy;
  /** Wakes the dispatchers (a delivery queued outside the trigger). */
  notify(): Promise<void>;
}

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** After a rotation the old secret keeps signing this long, as the specification allows. */
const ROTATION_OVERLAP_MS = DAY;

export const WEBHOOK_KEYSET = keyset<EndpointRow>("webhooks", [webhookEndpoints.created_at, webhookEndpoints.id]);
export const DELIVERY_KEYSET = keyset<DeliveryRow & { event_type: string }>("webhook_deliveries", [webhookDeliveries.created_at, webhookDeliveries.id]);

export const webhookView = (row: EndpointRow) => ({
  id: row.id,
  url: row.url,
  description: row.description,
  events: row.events,
  enabled: row.enabled,
  disabled_reason: row.disabled_reason,
  previous_secret_expires_at: row.previous_secret_expires_at ? rfc3339(row.previous_secret_expires_at) : null,
  created_at: rfc3339(row.created_at),
  updated_at: rfc3339(row.updated_at),
});

export const deliveryView = (row: DeliveryRow & { event_type: string }) => ({
  id: row.id,
  webhook_id: row.endpoint_id,
  event_id: row.event_id,
  event_type: row.event_type,
  state: row.state,
  attempts: row.attempts,
  status_code: row.last_status_code,
  duration_ms: row.last_duration_ms,
  error: row.last_error,
  last_attempt_at: row.last_attempt_at ? rfc3339(row.last_attempt_at) : null,
  next_attempt_at: row.state === "pending" && row.next_attempt_at ? rfc3339(row.next_attempt_at) : null,
  created_at: rfc3339(row.created_at),
});

async function findEndpoint(ctx: ServiceContext, clinicId: string, id: string): Promise<EndpointRow> {
  const [row] = await ctx.db.select().from(webhookEndpoints).where(and(eq(webhookEndpoints.clinic_id, clinicId), eq(webhookEndpoints.id, id), isNull(webhookEndpoints.deleted_at)));
  if (!row) throw AppError.notFound("Webhook", id);
  return row;
}

export const getWebhook = async (ctx: ServiceContext, clinicId: string, id: string) => webhookView(await findEndpoint(ctx, clinicId, id));

/** Serializes a clinic's webhook creations, so two at once cannot both pass the count. */
const ENDPOINT_CAP_LOCK = 724_311_037;

export async function createWebhook(ctx: WebhookServiceContext, clinicId: string, input: CreateWebhookInput) {
  await ctx.destinations.check(input.url);
  const secret = newWebhookSecret();
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${ENDPOINT_CAP_LOCK}, hashtext(${clinicId}))`);
    const [existing] = await tx.select({ n: sql<number>`count(*)::int` }).from(webhookEndpoints).where(and(eq(webhookEndpoints.clinic_id, clinicId), isNull(webhookEndpoints.deleted_at)));
    if (Number(existing?.n ?? 0) >= ctx.maxEndpoints) {
      throw new AppError("CONFLICT", `A clinic may have at most ${ctx.maxEndpoints} webhooks (WEBHOOK_MAX_ENDPOINTS); delete one first`, { limit: ctx.maxEndpoints });
    }
    const [created] = await tx
      .insert(webhookEndpoints)
      .values({ id: newId(), clinic_id: clinicId, url: input.url, description: input.description ?? null, events: input.events, enabled: input.enabled ?? true, secret_encrypted: ctx.secrets.seal(secret), created_at: now, updated_at: now })
      .returning();
    return created!;
  });
  return { ...webhookView(row), secret };
}

export async function listWebhooks(ctx: ServiceContext, clinicId: string, page: PageRequest) {
  return pageOf<EndpointRow>(ctx.db, webhookEndpoints, [eq(webhookEndpoints.clinic_id, clinicId), isNull(webhookEndpoints.deleted_at)], page, WEBHOOK_KEYSET);
}

/** Delta sync: webhooks changed after `since`, deleted ones included. */
export const WEBHOOK_CHANGES = changesKeyset<EndpointRow>(webhookEndpoints);
export const webhookChanges = (ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) => changedSince<EndpointRow>(ctx.db, webhookEndpoints, clinicId, since, page, WEBHOOK_CHANGES);

export async function updateWebhook(ctx: WebhookServiceContext, clinicId: string, id: string, input: UpdateWebhookInput) {
  await findEndpoint(ctx, clinicId, id);
  if (input.url !== undefined) await ctx.destinations.check(input.url);
  const changes: Partial<EndpointRow> = { updated_at: ctx.clock.now() };
  if (input.url !== undefined) changes.url = input.url;
  if (input.events !== undefined) changes.events = input.events;
  if (input.description !== undefined) changes.description = input.description;
  if (input.enabled !== undefined) {
    changes.enabled = input.enabled;
    // Enabled again by a person: the service's reason for disabling it no longer holds.
    if (input.enabled) changes.disabled_reason = null;
  }
  const [row] = await ctx.db.update(webhookEndpoints).set(changes).where(and(eq(webhookEndpoints.clinic_id, clinicId), eq(webhookEndpoints.id, id))).returning();
  return webhookView(row!);
}

export async function removeWebhook(ctx: ServiceContext, clinicId: string, id: string) {
  await findEndpoint(ctx, clinicId, id);
  const now = ctx.clock.now();
  await ctx.db.update(webhookEndpoints).set({ deleted_at: now, updated_at: now, enabled: false }).where(and(eq(webhookEndpoints.clinic_id, clinicId), eq(webhookEndpoints.id, id)));
}

/** A new secret; the previous one keeps signing beside it for 24 hours. */
export async function rotateSecret(ctx: WebhookServiceContext, clinicId: string, id: string) {
  const current = await findEndpoint(ctx, clinicId, id);
  const secret = newWebhookSecret();
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .update(webhookEndpoints)
    .set({ secret_encrypted: ctx.secrets.seal(secret), previous_secret_encrypted: current.secret_encrypted, previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS), updated_at: now })
    .where(eq(webhookEndpoints.id, id))
    .returning();
  return { ...webhookView(row!), secret };
}

/** Records a `webhook.test` event and queues it for this endpoint alone. */
export async function sendTest(ctx: WebhookServiceContext, clinicId: string, id: string) {
  const endpoint = await findEndpoint(ctx, clinicId, id);
  const now = ctx.clock.now();
  const deliveryId = newId();
  await ctx.db.transaction(async (tx) => {
    const [event] = await tx
      .insert(events)
      .values({
        id: newId(),
        clinic_id: clinicId,
        occurred_at: now,
        // The actor as the audit trigger would record it, from this transaction's change context.
        actor_type: sql`coalesce(nullif(current_setting('app.context', true), '')::jsonb ->> 'actor_type', 'system')`,
        actor_id: sql`nullif(current_setting('app.context', true), '')::jsonb ->> 'actor_id'`,
        actor_name: sql`nullif(current_setting('app.context', true), '')::jsonb ->> 'actor_name'`,
        request_id: sql`nullif(current_setting('app.context', true), '')::jsonb ->> 'request_id'`,
        action: "webhook.test",
        entity_type: "webhook",
        entity_id: endpoint.id,
        changes: {},
      })
      .returning({ id: events.id });
    await tx.insert(webhookDeliveries).values({ id: deliveryId, clinic_id: clinicId, endpoint_id: endpoint.id, event_id: event!.id, next_attempt_at: now, created_at: now });
  });
  await ctx.notify();
  return deliveryView(await findDelivery(ctx, clinicId, deliveryId));
}

type AttemptRow = typeof webhookAttempts.$inferSelect;

export const attemptView = (row: AttemptRow) => ({
  attempt: row.attempt,
  attempted_at: rfc3339(row.attempted_at),
  status_code: row.status_code,
  duration_ms: row.duration_ms,
  error: row.error,
});

/** One delivery with every attempt of it, newest first. */
export async function getDelivery(ctx: ServiceContext, clinicId: string, id: string) {
  const delivery = await findDelivery(ctx, clinicId, id);
  const attempts = await ctx.db
    .select()
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.clinic_id, clinicId), eq(webhookAttempts.delivery_id, id)))
    .orderBy(desc(webhookAttempts.attempted_at), desc(webhookAttempts.id));
  return { ...deliveryView(delivery), attempt_log: attempts.map(attemptView) };
}

async function findDelivery(ctx: ServiceContext, clinicId: string, id: string) {
  const [row] = await ctx.db
    .select({ delivery: webhookDeliveries, event_type: events.action })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.event_id))
    .where(and(eq(webhookDeliveries.clinic_id, clinicId), eq(webhookDeliveries.id, id)));
  if (!row) throw AppError.notFound("Delivery", id);
  return { ...row.delivery, event_type: row.event_type };
}

/** A webhook's deliveries, newest first. */
export async function listDeliveries(ctx: ServiceContext, clinicId: string, webhookId: string, page: PageRequest & { kind: "cursor" }) {
  await findEndpoint(ctx, clinicId, webhookId);
  const after = page.after ? or(lt(webhookDeliveries.created_at, page.after[0] as Date), and(eq(webhookDeliveries.created_at, page.after[0] as Date), lt(webhookDeliveries.id, page.after[1] as string))) : undefined;
  const rows = await ctx.db
    .select({ delivery: webhookDeliveries, event_type: events.action })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.event_id))
    .where(and(eq(webhookDeliveries.clinic_id, clinicId), eq(webhookDeliveries.endpoint_id, webhookId), after))
    .orderBy(desc(webhookDeliveries.created_at), desc(webhookDeliveries.id))
    .limit(page.limit + 1);
  return { rows: rows.map((r) => ({ ...r.delivery, event_type: r.event_type })), total: null };
}

/** Sends one delivery again now (once: a failure of this resend is final). */
export async function retryDelivery(ctx: WebhookServiceContext, clinicId: string, id: string, scheduleLength: number) {
  const delivery = await findDelivery(ctx, clinicId, id);
  await findEndpoint(ctx, clinicId, delivery.endpoint_id);
  await ctx.db
    .update(webhookDeliveries)
    .set({ state: "pending", next_attempt_at: ctx.clock.now(), claimed_until: null, attempts: Math.max(delivery.attempts, scheduleLength - 1, 1) })
    .where(eq(webhookDeliveries.id, id));
  await ctx.notify();
  return deliveryView(await findDelivery(ctx, clinicId, id));
}

export { DELIVERY_CHANNEL };
