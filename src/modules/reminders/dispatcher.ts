import { sql, type SQL } from "drizzle-orm";
import type { ReminderSettings } from "../../config";
import type { Database } from "../../db/client";
import type { ConsentChannel, ReminderKind, SuppressionReason } from "../../db/schema";
import type { Clock } from "../../lib/clock";
import type { Logger } from "../../lib/logger";
import { configuredChannels, type Channels, type SendOutcome } from "./channels";
import { composeEmail, fill, localFacts, type MessageFacts, type MessageLanguage } from "./compose";
import type { ReminderLinks } from "./links";
import { planReminders } from "./planner";

export const REMINDER_CHANNEL = "reminder_messages";

/** Messages claimed per round; each round sends them together. */
const BATCH = 32;
/** Sends in flight per instance (the SMTP pool's connections). */
const SENDS_AT_ONCE = 4;
/** Longest sleep between rounds (a lost notice, an expired claim, the next planning pass). */
const IDLE_WAKE_MS = 30_000;
/** How far ahead planning writes messages into the outbox. */
const PLAN_HORIZON_MS = 60 * 60_000;

interface ClaimedMessage {
  id: string;
  clinic_id: string;
  kind: ReminderKind;
  channel: ConsentChannel;
  subject_id: string;
  due_at: Date | string;
  expires_at: Date | string;
  attempts: number;
  /** Set when an earlier attempt was handed to the provider and its answer never recorded: in doubt. */
  sending_at: Date | string | null;
  rule_live: boolean;
  email_subject: string | null;
  email_text: string | null;
  whatsapp_template: string | null;
  whatsapp_language: string | null;
  whatsapp_parameters: string[] | string;
  clinic_name: string;
  timezone: string;
  language: string;
  tutor_name: string;
  tutor_email: string | null;
  tutor_phone: string | null;
  tutor_blocked: boolean;
  patient_name: string;
  patient_gone: boolean;
  patient_deceased: boolean;
  consent: string | null;
  subject_live: boolean;
  subject_done: boolean;
  subject_at: Date | string | null;
  subject_what: string | null;
}

export interface ReminderDispatcherDeps {
  database: Database;
  clock: Clock;
  logger: Logger;
  settings: ReminderSettings;
  channels: Channels;
  links: ReminderLinks;
}

const asDate = (value: Date | string) => (value instanceof Date ? value : new Date(value));
const textArray = (value: string[] | string): string[] => (Array.isArray(value) ? value : value.replace(/^\{|\}$/g, "").split(",").filter(Boolean).map((item) => item.replace(/^"|"$/g, "")));

/**
 * Plans and sends the clinic's reminders from the outbox. Work is claimed in the database as
 * webhook deliveries are (a lease taken with FOR UPDATE SKIP LOCKED), so any number of instances
 * share the outbox without sending one message together, and a killed instance's claims are
 * taken over once they lapse. Just before a message leaves, its tutor's consent and block are read
 * again, so a withdrawal stops it at once. It wakes on the NOTIFY planning sends, and otherwise
 * when the next message falls due.
 */
export class ReminderDispatcher {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private subscription: { stop(): Promise<void> } | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly deps: ReminderDispatcherDeps) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.subscription = await this.deps.database.listen(REMINDER_CHANNEL, { onMessage: () => this.wake(), onSubscribed: () => this.wake() });
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.subscription?.stop();
    await this.running;
  }

  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = (async () => {
      try {
        await this.plan();
        do {
          this.again = false;
          while (!this.stopped && (await this.runOnce()) === BATCH);
        } while (this.again && !this.stopped);
        if (!this.stopped) this.sleep(await this.nextDueInMs());
      } catch (error) {
        this.deps.logger.error("reminder dispatcher round failed", { error: error instanceof Error ? error.message : String(error) });
        if (!this.stopped) this.sleep(5_000);
      } finally {
        this.running = undefined;
      }
    })();
  }

  private sleep(ms: number): void {
    this.timer = setTimeout(() => this.wake(), Math.max(10, Math.min(ms, IDLE_WAKE_MS)));
    this.timer.unref?.();
  }

  private async nextDueInMs(): Promise<number> {
    const [row] = await this.deps.database.query<{ next: Date | string | null }>(
      "select min(greatest(send_at, coalesce(claimed_until, send_at))) as next from reminder_messages where status = 'queued'",
    );
    return row?.next ? new Date(row.next).getTime() - this.deps.clock.now().getTime() : IDLE_WAKE_MS;
  }

  /** Writes what falls due within the planning horizon into the outbox; resolves to how many. */
  async plan(): Promise<number> {
    const now = this.deps.clock.now();
    return planReminders(this.deps.database, now, new Date(now.getTime() + PLAN_HORIZON_MS), configuredChannels(this.deps.channels));
  }

  /** Claims what is due and sends it (or suppresses it); resolves to how many were claimed. */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    // Longer than any attempt can take (its timeout, and recording it), so a live claim never lapses.
    const lease = new Date(now.getTime() + this.deps.settings.timeoutMs * 2 + 5_000);
    const claimed = await this.deps.database.query<ClaimedMessage>(
      `with due as (
         select m.id from reminder_messages m
         where m.status = 'queued' and m.send_at <= $1 and (m.claimed_until is null or m.claimed_until <= $1)
         order by m.send_at, m.id
         limit $3
         for update of m skip locked
       ), claimed as (
         update reminder_messages m set claimed_until = $2, attempts = m.attempts + 1 from due where m.id = due.id
         returning m.id, m.clinic_id, m.rule_id, m.kind, m.channel, m.subject_id, m.patient_id, m.tutor_id, m.due_at, m.expires_at, m.attempts, m.sending_at
       )
       select c.id, c.clinic_id, c.kind, c.channel, c.subject_id, c.due_at, c.expires_at, c.attempts, c.sending_at,
              (r.enabled and r.deleted_at is null) as rule_live, r.email_subject, r.email_text, r.whatsapp_template, r.whatsapp_language, r.whatsapp_parameters,
              cl.name as clinic_name, cl.timezone, cl.language,
              t.name as tutor_name, t.email as tutor_email, t.phone as tutor_phone, (t.blocked_at is not null or t.deleted_at is not null) as tutor_blocked,
              p.name as patient_name, p.deleted_at is not null as patient_gone, p.deceased_on is not null as patient_deceased,
              tc.status as consent,
              case c.kind when 'vaccination_due' then va.id is not null and va.deleted_at is null
                          when 'appointment' then vi.id is not null and vi.deleted_at is null
                          else al.id is not null and al.deleted_at is null end as subject_live,
              case c.kind when 'vaccination_due' then va.due_closed_at is not null
                          when 'appointment' then vi.status <> 'scheduled'
                          else al.status <> 'active' end as subject_done,
              case c.kind when 'vaccination_due' then (va.next_due_on::timestamp at time zone cl.timezone)
                          when 'appointment' then vi.scheduled_at
                          else (al.due_date::timestamp at time zone cl.timezone) end as subject_at,
              case c.kind when 'vaccination_due' then va.vaccine when 'appointment' then vi.reason else al.message end as subject_what
       from claimed c
       join reminder_rules r on r.id = c.rule_id
       join clinics cl on cl.id = c.clinic_id
       join tutors t on t.id = c.tutor_id
       join patients p on p.id = c.patient_id
       left join tutor_consents tc on tc.tutor_id = c.tutor_id and tc.channel = c.channel and tc.purpose = 'reminders'
       left join vaccinations va on c.kind = 'vaccination_due' and va.id = c.subject_id
       left join visits vi on c.kind = 'appointment' and vi.id = c.subject_id
       left join alerts al on c.kind = 'follow_up' and al.id = c.subject_id`,
      [now.toISOString(), lease.toISOString(), BATCH],
    );
    // A few at a time, each read again just before it leaves: a queue of sends waiting inside the
    // transport would leave after a withdrawal read before them.
    const waiting = [...claimed];
    await Promise.all(Array.from({ length: SENDS_AT_ONCE }, async () => {
      for (let message = waiting.shift(); message; message = waiting.shift()) await this.attempt(message);
    }));
    return claimed.length;
  }

  /** Why the message must not leave now, read from what the claim saw. */
  private suppression(message: ClaimedMessage, now: Date): SuppressionReason | null {
    if (message.patient_deceased) return "patient_deceased";
    if (message.tutor_blocked) return "tutor_blocked";
    if (message.consent !== "granted") return "consent_withdrawn";
    if (!message.rule_live) return "rule_disabled";
    if (!message.subject_live || message.patient_gone) return message.kind === "appointment" ? "appointment_cancelled" : "subject_gone";
    if (message.subject_done) return message.kind === "vaccination_due" ? "dose_given" : message.kind === "appointment" ? "appointment_cancelled" : "subject_gone";
    if (message.subject_at && asDate(message.subject_at).getTime() !== asDate(message.due_at).getTime()) return message.kind === "appointment" ? "appointment_moved" : "subject_gone";
    if (now >= asDate(message.expires_at)) return "late";
    const address = message.channel === "email" ? message.tutor_email : message.tutor_phone;
    if (!address) return "no_address";
    return null;
  }

  /**
   * How long a WhatsApp message in doubt waits for Meta's status webhook (which names it by its
   * `biz_opaque_callback_data`) before it is taken as never received and sent again: the first
   * step of the retry schedule (1 minute by default; Meta reports `sent` within seconds).
   */
  private settleMs(): number {
    return this.deps.settings.retryScheduleMs[0] ?? 60_000;
  }

  /**
   * A message whose earlier attempt was handed to the provider by an instance that stopped before
   * recording the answer may have been received, so it is not sent again blindly on WhatsApp: it
   * waits for Meta's status webhook, which names it and settles it as sent (`recordProviderStatus`);
   * when none has come within `settleMs`, Meta never took it, and it is sent again. An e-mail in
   * doubt is sent again at once, with the same Message-ID: an SMTP server keeps a message only
   * once it has answered the end of its data, so a kill during the conversation (nearly the whole
   * window) leaves the server without it, and only a kill between that answer and the commit of
   * `sent` gives the tutor a second copy (docs/reminders-and-consent.md gives the measured window).
   * Resolves to whether it was settled here (false: send it now).
   */
  private async settleInDoubt(message: ClaimedMessage, handedAt: Date): Promise<boolean> {
    if (message.channel === "email") return false;
    const settleBy = new Date(handedAt.getTime() + this.settleMs());
    if (this.deps.clock.now() >= settleBy) return false;
    // Waiting for the webhook is not an attempt: the count stays the attempts handed to the provider.
    await this.finish(message.id, sql`send_at = ${settleBy.toISOString()}, attempts = attempts - 1`);
    return true;
  }

  private async attempt(message: ClaimedMessage): Promise<void> {
    if (message.sending_at && (await this.settleInDoubt(message, asDate(message.sending_at)))) return;
    const reason = this.suppression(message, this.deps.clock.now());
    if (reason) return this.finish(message.id, sql`status = 'suppressed', suppressed_reason = ${reason}`);
    const channel = this.deps.channels[message.channel];
    if (!channel) return this.retryOrFail(message, { ok: false, error: `The ${message.channel} channel is not configured on this instance`, permanent: false });
    // Read again just before it leaves: a withdrawal or a block recorded since the claim stops it.
    const [fresh] = await this.deps.database.query<{ consent: string | null; blocked: boolean }>(
      `select (select status from tutor_consents where tutor_id = t.id and channel = $2 and purpose = 'reminders') as consent, (t.blocked_at is not null or t.deleted_at is not null) as blocked from tutors t where t.id = (select tutor_id from reminder_messages where id = $1)`,
      [message.id, message.channel],
    );
    if (!fresh || fresh.blocked) return this.finish(message.id, sql`status = 'suppressed', suppressed_reason = 'tutor_blocked'`);
    if (fresh.consent !== "granted") return this.finish(message.id, sql`status = 'suppressed', suppressed_reason = 'consent_withdrawn'`);

    const language: MessageLanguage = message.language === "en" ? "en" : "es";
    const dueAt = asDate(message.due_at);
    const facts: MessageFacts = {
      tutor: message.tutor_name,
      patient: message.patient_name,
      clinic: message.clinic_name,
      ...localFacts(dueAt, message.timezone, language, message.kind === "appointment"),
      what: message.subject_what ?? "",
    };
    let outcome: SendOutcome;
    let recipient: string;
    if (message.channel === "whatsapp" && !message.whatsapp_template) return this.finish(message.id, sql`status = 'failed', last_error = ${"The rule names no WhatsApp template"}`);
    // Recorded before the provider is called: a kill from here until the answer is recorded
    // leaves the message in doubt, and whoever reclaims it settles it (settleInDoubt).
    const handedAt = this.deps.clock.now();
    await this.deps.database.query("update reminder_messages set sending_at = $2 where id = $1 and status = 'queued'", [message.id, handedAt.toISOString()]);
    if (message.channel === "email" && this.deps.channels.email) {
      recipient = message.tutor_email!;
      const links = this.deps.links;
      const composed = composeEmail({
        kind: message.kind,
        language,
        subject: message.email_subject,
        text: message.email_text,
        facts,
        links: { unsubscribe: links.url("unsubscribe", message.id), ...(message.kind === "appointment" ? { confirm: links.url("confirm", message.id), cancel: links.url("cancel", message.id) } : {}) },
      });
      outcome = await this.deps.channels.email.send({ messageId: message.id, to: recipient, unsubscribeUrl: links.url("unsubscribe", message.id), ...composed });
    } else if (this.deps.channels.whatsapp) {
      recipient = message.tutor_phone!;
      outcome = await this.deps.channels.whatsapp.send({ messageId: message.id, to: recipient, template: message.whatsapp_template!, language: message.whatsapp_language ?? language, parameters: textArray(message.whatsapp_parameters).map((parameter) => fill(parameter, facts)) });
    } else return;
    if (outcome.ok) {
      return this.finish(message.id, sql`status = 'sent', sent_at = ${this.deps.clock.now().toISOString()}, provider_message_id = ${outcome.providerMessageId}, recipient = ${recipient}, last_error = null`);
    }
    // WhatsApp gave no answer: Meta may have the message, so it stays in doubt until its status webhook or the settling time.
    if (outcome.inDoubt && message.channel === "whatsapp") {
      this.deps.logger.warn("reminder attempt in doubt", { message_id: message.id, channel: message.channel, attempt: message.attempts, error: outcome.error });
      return this.finish(message.id, sql`send_at = ${new Date(handedAt.getTime() + this.settleMs()).toISOString()}, last_error = ${outcome.error}`);
    }
    return this.retryOrFail(message, outcome);
  }

  /** A failure waits for the next step of the schedule, unless it was final, the schedule is spent, or the retry would be late. */
  private async retryOrFail(message: ClaimedMessage, outcome: Extract<SendOutcome, { ok: false }>): Promise<void> {
    const schedule = this.deps.settings.retryScheduleMs;
    const wait = schedule[message.attempts - 1];
    const next = wait === undefined ? null : new Date(this.deps.clock.now().getTime() + wait);
    this.deps.logger.warn("reminder attempt failed", { message_id: message.id, channel: message.channel, attempt: message.attempts, error: outcome.error });
    // The provider answered (or was never called): the message is not in doubt.
    if (outcome.permanent || !next || next >= asDate(message.expires_at)) return this.finish(message.id, sql`status = 'failed', sending_at = null, last_error = ${outcome.error}`);
    return this.finish(message.id, sql`send_at = ${next.toISOString()}, sending_at = null, last_error = ${outcome.error}`);
  }

  /** Records the attempt's end and releases the claim (one statement, so a kill leaves either the claim or the result). */
  private async finish(id: string, changes: SQL): Promise<void> {
    const { database, clock } = this.deps;
    const now = clock.now();
    await database.changeContexts.run({ actor: { type: "system", id: null, name: "reminder dispatcher" }, now: () => now }, () =>
      database.db.transaction((tx) => tx.execute(sql`update reminder_messages set ${changes}, claimed_until = null, updated_at = ${now.toISOString()} where id = ${id}`)),
    );
  }
}
