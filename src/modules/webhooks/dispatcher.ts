import { sql } from "drizzle-orm";
import type { WebhookSettings } from "../../config";
import type { Database } from "../../db/client";
import type { Clock } from "../../lib/clock";
import type { Logger } from "../../lib/logger";
import type { SecretBox } from "../../lib/secrets";
import { rfc3339 } from "../../lib/time";
import { eventChanges } from "../audit/changes";
import type { DestinationPolicy } from "./destination";
import { webhookHeaders } from "./signing";
import { post, type SendResult } from "./transport";

export const DELIVERY_CHANNEL = "webhook_deliveries";

/** Deliveries claimed per round; each round sends them together. */
const BATCH = 64;
/** Longest sleep between rounds when nothing is due (a lost notice or an expired claim is picked up by then). */
const IDLE_WAKE_MS = 30_000;
/** Longest wait a receiver's Retry-After can impose. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  attempts: number;
  event_id: string;
  occurred_at: Date | string;
  action: string;
  entity_type: string;
  entity_id: string;
  clinic_id: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  changes: Record<string, unknown> | string;
  fields_before: Record<string, unknown> | string | null;
  fields_after: Record<string, unknown> | string | null;
  redacted_fields: string[] | string | null;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | string | null;
}

/** The body a receiver gets: the event's type, time and thin data (ids, and the fields that changed). */
export function webhookPayload(event: { action: string; occurred_at: Date; entity_type: string; entity_id: string; clinic_id: string; actor: { type: string; id: string | null; name: string | null }; changes: Record<string, unknown> }) {
  return JSON.stringify({
    type: event.action,
    timestamp: rfc3339(event.occurred_at),
    data: { object: event.entity_type, id: event.entity_id, clinic_id: event.clinic_id, actor: event.actor, changes: event.changes },
  });
}

export interface DispatcherDeps {
  database: Database;
  clock: Clock;
  logger: Logger;
  settings: WebhookSettings;
  secrets: SecretBox;
  destinations: DestinationPolicy;
}

/**
 * Sends the queued deliveries. Work is claimed in the database (a claim is a lease longer than
 * the request timeout, taken with FOR UPDATE SKIP LOCKED), so any number of instances share the
 * queue without sending one attempt twice, and a killed instance's claims are taken over once
 * they lapse. It wakes on the NOTIFY the queueing trigger sends, and otherwise when the next
 * retry falls due.
 */
export class WebhookDispatcher {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private subscription: { stop(): Promise<void> } | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly deps: DispatcherDeps) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.subscription = await this.deps.database.listen(DELIVERY_CHANNEL, { onMessage: () => this.wake(), onSubscribed: () => this.wake() });
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.subscription?.stop();
    await this.running;
  }

  /** Runs rounds until nothing is due, then sleeps until the next due attempt (or a notice). */
  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = (async () => {
      try {
        do {
          this.again = false;
          while (!this.stopped && (await this.runOnce()) === BATCH);
        } while (this.again && !this.stopped);
        if (!this.stopped) this.sleepUntilNextDue(await this.nextDueInMs());
      } catch (error) {
        this.deps.logger.error("webhook dispatcher round failed", { error: error instanceof Error ? error.message : String(error) });
        if (!this.stopped) this.sleepUntilNextDue(5_000);
      } finally {
        this.running = undefined;
      }
    })();
  }

  private sleepUntilNextDue(ms: number): void {
    this.timer = setTimeout(() => this.wake(), Math.max(10, Math.min(ms, IDLE_WAKE_MS)));
    this.timer.unref?.();
  }

  private async nextDueInMs(): Promise<number> {
    const [row] = await this.deps.database.query<{ next: Date | string | null }>(
      "select min(greatest(next_attempt_at, coalesce(claimed_until, next_attempt_at))) as next from webhook_deliveries where state = 'pending'",
    );
    return row?.next ? new Date(row.next).getTime() - this.deps.clock.now().getTime() : IDLE_WAKE_MS;
  }

  /** Claims what is due and sends it; resolves to how many were claimed. */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    const schedule = this.deps.settings.retryScheduleMs;
    // Longer than any attempt can take (its timeout, and recording it), so a live claim never lapses.
    const lease = new Date(now.getTime() + this.deps.settings.timeoutMs * 2 + 5_000);
    const claimed = await this.deps.database.query<ClaimedDelivery>(
      `with due as (
         select d.id from webhook_deliveries d
         join webhook_endpoints w on w.id = d.endpoint_id and w.enabled and w.deleted_at is null
         where d.state = 'pending' and d.next_attempt_at + (case when d.attempts = 0 then $3::bigint else 0 end) * interval '1 millisecond' <= $1
           and (d.claimed_until is null or d.claimed_until <= $1)
         order by d.next_attempt_at, d.id
         limit $4
         for update of d skip locked
       ), claimed as (
         update webhook_deliveries d set claimed_until = $2, attempts = d.attempts + 1 from due where d.id = due.id
         returning d.id, d.endpoint_id, d.event_id, d.attempts
       )
       select c.id, c.endpoint_id, c.attempts, e.id as event_id, e.occurred_at, e.action, e.entity_type, e.entity_id, e.clinic_id, e.actor_type, e.actor_id, e.actor_name, e.changes, e.fields_before, e.fields_after, e.redacted_fields,
              w.url, w.secret_encrypted, w.previous_secret_encrypted, w.previous_secret_expires_at
       from claimed c join events e on e.id = c.event_id join webhook_endpoints w on w.id = c.endpoint_id`,
      [now.toISOString(), lease.toISOString(), schedule[0] ?? 0, BATCH],
    );
    await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
    return claimed.length;
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { clock, settings, secrets, destinations } = this.deps;
    const occurred = new Date(delivery.occurred_at);
    const changes = eventChanges(delivery);
    const body = webhookPayload({ action: delivery.action, occurred_at: occurred, entity_type: delivery.entity_type, entity_id: delivery.entity_id, clinic_id: delivery.clinic_id, actor: { type: delivery.actor_type, id: delivery.actor_id, name: delivery.actor_name }, changes });
    const sentAt = clock.now();
    const signing = [secrets.open(delivery.secret_encrypted)];
    if (delivery.previous_secret_encrypted && delivery.previous_secret_expires_at && new Date(delivery.previous_secret_expires_at) > sentAt) signing.push(secrets.open(delivery.previous_secret_encrypted));
    let result: SendResult;
    try {
      const destination = await destinations.check(delivery.url);
      result = await post(destination, webhookHeaders(signing, delivery.event_id, Math.floor(sentAt.getTime() / 1000), body), body, settings.timeoutMs);
    } catch (error) {
      result = { status: null, retryAfterSeconds: null, durationMs: 0, error: error instanceof Error ? error.message : String(error) };
    }
    await this.record(delivery, result, sentAt);
  }

  private async record(delivery: ClaimedDelivery, result: SendResult, sentAt: Date): Promise<void> {
    const { database, clock, settings, logger } = this.deps;
    const schedule = settings.retryScheduleMs;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const exhausted = !ok && !gone && delivery.attempts >= schedule.length;
    let nextAttempt: Date | null = null;
    if (!ok && !gone && !exhausted) {
      const wait = schedule[delivery.attempts]!;
      // Up to a tenth more, so that endpoints failing together are not retried in lockstep.
      let delay = wait + Math.floor(Math.random() * wait * 0.1);
      const backOff = result.status === 429 || (result.status !== null && result.status >= 500);
      if (backOff && result.retryAfterSeconds !== null) delay = Math.max(delay, Math.min(result.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS));
      nextAttempt = new Date(clock.now().getTime() + delay);
    }
    const error = ok ? null : (result.error ?? `the receiver answered ${result.status}`);
    await database.query(
      `update webhook_deliveries set state = $2, next_attempt_at = $3, claimed_until = null, last_attempt_at = $4, last_status_code = $5, last_duration_ms = $6, last_error = $7 where id = $1`,
      [delivery.id, ok ? "succeeded" : nextAttempt ? "pending" : "failed", nextAttempt?.toISOString() ?? null, sentAt.toISOString(), result.status, result.durationMs, error],
    );
    if (gone) await this.disable(delivery.endpoint_id, "The receiver answered 410 Gone: it asked not to be sent anything more");
    else if (exhausted) {
      // Disabled only if nothing reached it since this delivery's event: the receiver is down, not one message refused.
      const [since] = await database.query<{ n: number | string }>(
        "select count(*) as n from webhook_deliveries where endpoint_id = $1 and state = 'succeeded' and last_attempt_at > $2",
        [delivery.endpoint_id, new Date(delivery.occurred_at).toISOString()],
      );
      if (Number(since?.n ?? 0) === 0) await this.disable(delivery.endpoint_id, `Every attempt of the retry schedule failed (last: ${error})`);
    }
    if (!ok) logger.warn("webhook attempt failed", { delivery_id: delivery.id, endpoint_id: delivery.endpoint_id, attempt: delivery.attempts, status: result.status, error });
  }

  private async disable(endpointId: string, reason: string): Promise<void> {
    await this.deps.database.changeContexts.run({ actor: { type: "system", id: null, name: "webhook dispatcher" }, now: () => this.deps.clock.now() }, () =>
      this.deps.database.db.transaction((tx) =>
        tx.execute(sqlDisable(endpointId, reason, this.deps.clock.now())),
      ),
    );
  }
}

const sqlDisable = (endpointId: string, reason: string, now: Date) =>
  sql`update webhook_endpoints set enabled = false, disabled_reason = ${reason}, updated_at = ${now.toISOString()} where id = ${endpointId} and enabled`;
