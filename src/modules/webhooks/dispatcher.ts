import { sql } from "drizzle-orm";
import type { WebhookSettings } from "../../config";
import type { Database } from "../../db/client";
import type { Clock } from "../../lib/clock";
import type { Logger } from "../../lib/logger";
import type { SecretBox } from "../../lib/secrets";
import { newId } from "../../lib/crypto";
import type { DestinationPolicy } from "./destination";
import { webhookPayload, type PayloadEvent } from "./payload";
import { webhookHeaders } from "./signing";
import { post, type SendResult } from "./transport";

export const DELIVERY_CHANNEL = "webhook_deliveries";

/** Attempts this instance has in flight at once. */
const SLOTS = 64;
/** Attempts in flight at once over all instances to one endpoint, and to one clinic's endpoints. */
const PER_ENDPOINT = 8;
const PER_CLINIC = 16;
/** Longest sleep between claims when nothing is due (a lost notice or an expired claim is picked up by then). */
const IDLE_WAKE_MS = 30_000;
/** How soon to look again when deliveries are due but every one of them waits for a busy endpoint or clinic elsewhere. */
const BLOCKED_WAKE_MS = 1_000;
/** How long this instance leaves an endpoint whose secret it cannot open to the others. */
const UNOPENABLE_PAUSE_MS = 60_000;
/** Longest wait a receiver's Retry-After can impose. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

interface ClaimedDelivery extends PayloadEvent {
  delivery_id: string;
  endpoint_id: string;
  attempts: number;
  occurred_at: Date;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | string | null;
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
 * they lapse. It wakes on the NOTIFY the queueing trigger sends, when one of its attempts ends,
 * and otherwise when the next retry falls due.
 *
 * Fairness: each attempt runs on its own (a slow receiver holds one slot, never a round), and
 * claims take clinics in turn (each clinic's oldest due delivery first, one endpoint after
 * another), with at most PER_ENDPOINT attempts in flight to an endpoint and PER_CLINIC to a
 * clinic. So a clinic whose receivers never answer holds at most PER_CLINIC slots, and another
 * clinic's delivery waits at most one attempt's timeout for a free slot.
 */
export class WebhookDispatcher {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private subscription: { stop(): Promise<void> } | undefined;
  private claiming: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Endpoints whose secret this instance cannot open, until when it leaves them to other instances. */
  private readonly unopenable = new Map<string, number>();
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
    await this.claiming;
    await Promise.all(this.inFlight);
  }

  /** Claims into the free slots until nothing more is claimable, then sleeps until the next due attempt (or a notice, or a slot freeing). */
  private wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.claiming = (async () => {
      try {
        let blocked = false;
        let full = false;
        do {
          this.again = false;
          const free = SLOTS - this.inFlight.size;
          // Every slot busy: the next attempt to end wakes this again.
          full = free <= 0;
          if (full) break;
          const claimed = await this.claim(free);
          for (const delivery of claimed) this.track(this.attempt(delivery));
          blocked = claimed.length < free;
          if (!blocked) this.again = true;
        } while (this.again && !this.stopped);
        if (!this.stopped && !full) {
          const next = await this.nextDueInMs();
          // Due but not claimable: waiting on claims held elsewhere (this instance's own wake this when they end).
          this.sleepUntilNextDue(next <= 0 && blocked ? BLOCKED_WAKE_MS : next);
        }
      } catch (error) {
        this.deps.logger.error("webhook dispatcher round failed", { error: error instanceof Error ? error.message : String(error) });
        if (!this.stopped) this.sleepUntilNextDue(5_000);
      } finally {
        this.claiming = undefined;
        // A notice or a freed slot while this was ending (after its last claim) is not lost.
        if (this.again) this.wake();
      }
    })();
  }

  private track(attempt: Promise<void>): void {
    const tracked: Promise<void> = attempt
      .catch((error: unknown) => this.deps.logger.error("webhook attempt could not be recorded", { error: error instanceof Error ? error.message : String(error) }))
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wake();
      });
    this.inFlight.add(tracked);
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

  /** Claims what is due into the free slots, sends it and waits for every attempt; resolves to how many were claimed. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(Math.max(0, SLOTS - this.inFlight.size));
    await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
    return claimed.length;
  }

  /** Up to `limit` due deliveries, clinics in turn, within the per-endpoint and per-clinic bounds. */
  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.deps.clock.now();
    const schedule = this.deps.settings.retryScheduleMs;
    // Longer than any attempt can take (its timeout, and recording it), so a live claim never lapses.
    const lease = new Date(now.getTime() + this.deps.settings.timeoutMs * 2 + 5_000);
    for (const [endpoint, until] of this.unopenable) if (until <= now.getTime()) this.unopenable.delete(endpoint);
    const rows = await this.deps.database.query<ClaimedDelivery & { occurred_at: Date | string }>(
      `with in_flight as (
         select clinic_id, endpoint_id, count(*)::int as n from webhook_deliveries
         where claimed_until > $1 and state = 'pending'
         group by clinic_id, endpoint_id
       ), due as (
         -- Each endpoint's oldest due deliveries, as many as it has free places; its turn counts what it has in flight.
         select d.id, w.clinic_id, d.next_attempt_at, d.turn + coalesce(f.n, 0) as endpoint_turn
         from webhook_endpoints w
         left join in_flight f on f.endpoint_id = w.id
         cross join lateral (
           select d.id, d.next_attempt_at, row_number() over (order by d.next_attempt_at, d.id) as turn
           from webhook_deliveries d
           where d.endpoint_id = w.id and d.state = 'pending' and d.next_attempt_at <= $1
             and d.next_attempt_at + (case when d.attempts = 0 then $3::bigint else 0 end) * interval '1 millisecond' <= $1
             and (d.claimed_until is null or d.claimed_until <= $1)
           order by d.next_attempt_at, d.id
           limit greatest($5::int - coalesce(f.n, 0), 0)
         ) d
         where w.enabled and w.deleted_at is null and not (w.id = any($7::uuid[]))
       ), turns as (
         -- Clinics in turn: each clinic's deliveries numbered endpoint by endpoint, after what it has in flight.
         select due.id, due.next_attempt_at,
                row_number() over (partition by due.clinic_id order by due.endpoint_turn, due.next_attempt_at, due.id) + coalesce(c.n, 0) as clinic_turn
         from due left join (select clinic_id, sum(n)::int as n from in_flight group by clinic_id) c on c.clinic_id = due.clinic_id
       ), chosen as (
         select id from turns where clinic_turn <= $6
         order by clinic_turn, next_attempt_at, id
         limit $4
       ), locked as (
         select d.id from webhook_deliveries d
         where d.id in (select id from chosen) and d.state = 'pending' and (d.claimed_until is null or d.claimed_until <= $1)
         for update of d skip locked
       ), claimed as (
         update webhook_deliveries d set claimed_until = $2, attempts = d.attempts + 1 from locked where d.id = locked.id
         returning d.id, d.endpoint_id, d.event_id, d.attempts
       )
       select c.id as delivery_id, c.endpoint_id, c.attempts, e.id, e.occurred_at, e.action, e.entity_type, e.entity_id, e.clinic_id, e.actor_type, e.actor_id, e.changes, e.fields_before, e.fields_after, e.redacted_fields,
              w.url, w.secret_encrypted, w.previous_secret_encrypted, w.previous_secret_expires_at
       from claimed c join events e on e.id = c.event_id join webhook_endpoints w on w.id = c.endpoint_id`,
      [now.toISOString(), lease.toISOString(), schedule[0] ?? 0, limit, PER_ENDPOINT, PER_CLINIC, `{${[...this.unopenable.keys()].join(",")}}`],
    );
    return rows.map((row) => ({ ...row, occurred_at: new Date(row.occurred_at) }));
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { clock, settings, secrets, destinations } = this.deps;
    const sentAt = clock.now();
    let signing: string[];
    try {
      signing = [secrets.open(delivery.secret_encrypted)];
      if (delivery.previous_secret_encrypted && delivery.previous_secret_expires_at && new Date(delivery.previous_secret_expires_at) > sentAt) signing.push(secrets.open(delivery.previous_secret_encrypted));
    } catch (error) {
      return this.release(delivery, error instanceof Error ? error.message : String(error), sentAt);
    }
    const body = webhookPayload(delivery);
    let result: SendResult;
    try {
      const destination = await destinations.check(delivery.url);
      result = await post(destination, webhookHeaders(signing, delivery.id, Math.floor(sentAt.getTime() / 1000), body), body, settings.timeoutMs);
    } catch (error) {
      result = { status: null, retryAfterSeconds: null, durationMs: 0, error: error instanceof Error ? error.message : String(error) };
    }
    await this.record(delivery, result, sentAt);
  }

  /**
   * A secret this instance cannot open (its SECRETS_KEY is not the one the secret was sealed
   * with): nothing was sent, so the attempt is not counted; the error is recorded, the claim
   * released at once, and the endpoint left to other instances for a while.
   */
  private async release(delivery: ClaimedDelivery, reason: string, at: Date): Promise<void> {
    const error = `Not sent: this instance cannot open the webhook's signing secret (${reason})`;
    this.unopenable.set(delivery.endpoint_id, at.getTime() + UNOPENABLE_PAUSE_MS);
    await this.deps.database.query(
      `with released as (
         update webhook_deliveries set claimed_until = null, attempts = attempts - 1, last_attempt_at = $2, last_status_code = null, last_duration_ms = null, last_error = $3
         where id = $1 returning id, clinic_id
       )
       insert into webhook_attempts (id, clinic_id, delivery_id, attempt, attempted_at, status_code, duration_ms, error)
       select $4, clinic_id, id, $5, $2, null, 0, $3 from released`,
      [delivery.delivery_id, at.toISOString(), error, newId(), delivery.attempts],
    );
    this.deps.logger.error("webhook secret cannot be opened", { delivery_id: delivery.delivery_id, endpoint_id: delivery.endpoint_id, error: reason });
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
      `with recorded as (
         update webhook_deliveries set state = $2, next_attempt_at = $3, claimed_until = null, last_attempt_at = $4, last_status_code = $5, last_duration_ms = $6, last_error = $7
         where id = $1 returning id, clinic_id
       )
       insert into webhook_attempts (id, clinic_id, delivery_id, attempt, attempted_at, status_code, duration_ms, error)
       select $8, clinic_id, id, $9, $4, $5, $6, $7 from recorded`,
      [delivery.delivery_id, ok ? "succeeded" : nextAttempt ? "pending" : "failed", nextAttempt?.toISOString() ?? null, sentAt.toISOString(), result.status, result.durationMs, error, newId(), delivery.attempts],
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
    if (!ok) logger.warn("webhook attempt failed", { delivery_id: delivery.delivery_id, endpoint_id: delivery.endpoint_id, attempt: delivery.attempts, status: result.status, error });
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
