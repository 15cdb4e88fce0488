import { eq, inArray, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { changedSince, changesKeyset, clinicRecords, pageOf } from "../../db/clinic-records";
import { keyset, type PageRequest } from "../../db/keyset";
import { reminderMessages, reminderRules, tutors, type ConsentChannel, type ReminderState } from "../../db/schema";
import { AppError } from "../../lib/errors";
import { rfc3339 } from "../../lib/time";
import { recordConsent } from "../consents/service";
import type { Channels } from "./channels";
import type { CreateRuleInput, ReminderFilters, UpdateRuleInput } from "./model";

export const ruleRecords = clinicRecords(reminderRules, "Reminder rule");
type RuleRow = typeof reminderRules.$inferSelect;
type MessageRow = typeof reminderMessages.$inferSelect;

const UNIT_MINUTES = { m: 1, h: 60, d: 1440 } as const;

/** `-7d`, `-24h`, `90m`: minutes relative to the subject's moment. */
export function offsetMinutes(offset: string): number {
  const match = /^([-+]?)(\d+)([mhd])$/.exec(offset)!;
  const minutes = Number(match[2]) * UNIT_MINUTES[match[3] as keyof typeof UNIT_MINUTES];
  return match[1] === "-" ? -minutes : minutes;
}

export const ruleView = (row: RuleRow) => ({
  id: row.id,
  kind: row.kind,
  name: row.name,
  offset: row.offset,
  channels: row.channels,
  email_subject: row.email_subject,
  email_text: row.email_text,
  whatsapp_template: row.whatsapp_template,
  whatsapp_language: row.whatsapp_language,
  whatsapp_parameters: row.whatsapp_parameters,
  quiet_start: row.quiet_start,
  quiet_end: row.quiet_end,
  enabled: row.enabled,
  created_at: rfc3339(row.created_at),
  updated_at: rfc3339(row.updated_at),
});

/** A rule that sends on WhatsApp names its template: only approved templates may open a conversation. */
function assertSendable(rule: { channels: string[]; whatsapp_template?: string | null; offset?: string }) {
  if (rule.channels.includes("whatsapp") && !rule.whatsapp_template) {
    throw AppError.validation([{ path: "body.whatsapp_template", message: "Required when the rule sends on whatsapp (the approved template's name)" }], "A WhatsApp reminder needs its template");
  }
}

export async function createRule(ctx: ServiceContext, clinicId: string, input: CreateRuleInput) {
  assertSendable(input);
  return ruleView(await ruleRecords.insert(ctx, clinicId, { ...input, offset_minutes: offsetMinutes(input.offset) }));
}

export async function updateRule(ctx: ServiceContext, clinicId: string, id: string, input: UpdateRuleInput) {
  const current = await ruleRecords.find(ctx, clinicId, id);
  assertSendable({ channels: input.channels ?? current.channels, whatsapp_template: input.whatsapp_template === undefined ? current.whatsapp_template : input.whatsapp_template });
  return ruleView(await ruleRecords.update(ctx, clinicId, id, { ...input, ...(input.offset ? { offset_minutes: offsetMinutes(input.offset) } : {}) }));
}

export const listRules = (ctx: ServiceContext, clinicId: string, page: PageRequest) => ruleRecords.page(ctx, clinicId, [], page);
/** Delta sync of the rules: changed after an instant, removed ones included with their deleted_at. */
export const ruleChanges = (ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) => ruleRecords.changedSince(ctx, clinicId, since, page);

export const MESSAGE_KEYSET = keyset<MessageRow>("reminders", [reminderMessages.created_at, reminderMessages.id]);

export const messageView = (row: MessageRow) => ({
  id: row.id,
  rule_id: row.rule_id,
  kind: row.kind,
  subject_id: row.subject_id,
  patient_id: row.patient_id,
  tutor_id: row.tutor_id,
  channel: row.channel,
  state: row.status,
  suppressed_reason: row.suppressed_reason,
  due_at: rfc3339(row.due_at),
  send_at: rfc3339(row.send_at),
  attempts: row.attempts,
  error: row.last_error,
  sent_at: row.sent_at ? rfc3339(row.sent_at) : null,
  delivered_at: row.delivered_at ? rfc3339(row.delivered_at) : null,
  read_at: row.read_at ? rfc3339(row.read_at) : null,
  created_at: rfc3339(row.created_at),
  updated_at: rfc3339(row.updated_at),
});

/** Delta sync of the outbox: messages whose state changed after an instant, oldest change first. */
export const MESSAGE_CHANGES = changesKeyset<MessageRow>(reminderMessages);
export const messageChanges = (ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) => changedSince<MessageRow>(ctx.db, reminderMessages, clinicId, since, page, MESSAGE_CHANGES);

export const listMessages = (ctx: ServiceContext, clinicId: string, filters: ReminderFilters, page: PageRequest) =>
  pageOf<MessageRow>(
    ctx.db,
    reminderMessages,
    [
      eq(reminderMessages.clinic_id, clinicId),
      filters.state ? inArray(reminderMessages.status, filters.state.split(",") as ReminderState[]) : undefined,
      filters.channel ? eq(reminderMessages.channel, filters.channel) : undefined,
      filters.kind ? eq(reminderMessages.kind, filters.kind) : undefined,
      filters.patient_id ? eq(reminderMessages.patient_id, filters.patient_id) : undefined,
      filters.tutor_id ? eq(reminderMessages.tutor_id, filters.tutor_id) : undefined,
      filters.rule_id ? eq(reminderMessages.rule_id, filters.rule_id) : undefined,
    ],
    page,
    MESSAGE_KEYSET,
  );

/** Which channels this service can send on, and what to set for the others. */
export const channelStatus = (channels: Channels) => ({
  channels: [
    { channel: "email", configured: channels.email !== null, settings: ["SMTP_URL", "MAIL_FROM", "PUBLIC_URL"] },
    { channel: "whatsapp", configured: channels.whatsapp !== null, settings: ["WHATSAPP_TOKEN", "WHATSAPP_PHONE_NUMBER_ID", "WHATSAPP_APP_SECRET", "WHATSAPP_VERIFY_TOKEN", "WHATSAPP_API_URL"] },
  ],
});

/** The message a tutor's link names (any clinic: the signature is the authority). */
export async function messageOfLink(ctx: ServiceContext, id: string): Promise<MessageRow> {
  const [row] = await ctx.db.select().from(reminderMessages).where(eq(reminderMessages.id, id)).limit(1);
  if (!row) throw AppError.notFound("Reminder", id);
  return row;
}

/** The one-click unsubscribe: the tutor withdraws consent for the message's channel and purpose. */
export async function unsubscribe(ctx: ServiceContext, messageId: string) {
  const message = await messageOfLink(ctx, messageId);
  await recordConsent(ctx, message.clinic_id, message.tutor_id, { channel: message.channel, purpose: "reminders", granted: false, source: "link", evidence: `Unsubscribe link of reminder ${message.id}`, recordedBy: null });
  return message;
}

/** Words that, as a whole WhatsApp reply, withdraw consent (any case, accents ignored). */
const STOP_WORDS: readonly string[] = ["BAJA", "STOP", "NO", "DETENER"];
export const isStopReply = (text: string) => STOP_WORDS.includes(text.normalize("NFD").replace(/\p{M}/gu, "").replace(/[\s.!¡]+/g, " ").trim().toUpperCase());

/**
 * A reply asking to stop: every tutor with that WhatsApp number, in every clinic this service
 * sends for, withdraws WhatsApp consent for reminders and marketing. Resolves to how many tutors.
 */
export async function withdrawByReply(ctx: ServiceContext, from: string, evidence: string) {
  const digits = from.replace(/[^0-9]/g, "");
  if (!digits) return 0;
  const found = await ctx.db.select({ id: tutors.id, clinic_id: tutors.clinic_id }).from(tutors).where(sql`regexp_replace(coalesce(${tutors.phone}, ''), '[^0-9]', '', 'g') = ${digits}`);
  for (const tutor of found) {
    for (const purpose of ["reminders", "marketing"] as const) {
      await recordConsent(ctx, tutor.clinic_id, tutor.id, { channel: "whatsapp" satisfies ConsentChannel, purpose, granted: false, source: "reply", evidence, recordedBy: null });
    }
  }
  return found.length;
}

const STATUS_ORDER = { sent: 0, delivered: 1, read: 2 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A provider's status for a message it accepted: delivered and read only move forward; failed ends
 * it. A status naming (in `biz_opaque_callback_data`) a message still in doubt — handed to the
 * provider by an instance that stopped before recording the answer — settles it first: the
 * provider has it, so it is recorded as sent, with the provider's id, and never sent again.
 */
export async function recordProviderStatus(ctx: ServiceContext, event: { id: string; status: string; at: Date; error: string | null; callback?: string | null; recipient?: string | null }) {
  const { id: providerMessageId, status, at, error } = event;
  if (event.callback && UUID.test(event.callback)) {
    const now = ctx.clock.now().toISOString();
    await ctx.db.transaction((tx) =>
      tx.execute(sql`
        update reminder_messages set status = 'sent', sent_at = sending_at, provider_message_id = ${providerMessageId}, recipient = coalesce(${event.recipient ?? null}, recipient),
          claimed_until = null, last_error = null, updated_at = ${now}
        where id = ${event.callback} and status = 'queued' and sending_at is not null and provider_message_id is null`),
    );
  }
  if (status === "delivered" || status === "read") {
    const column = status === "delivered" ? sql`delivered_at = coalesce(delivered_at, ${at.toISOString()})` : sql`read_at = coalesce(read_at, ${at.toISOString()}), delivered_at = coalesce(delivered_at, ${at.toISOString()})`;
    const earlier = Object.entries(STATUS_ORDER).filter(([, rank]) => rank < STATUS_ORDER[status]).map(([name]) => name);
    await ctx.db.transaction((tx) =>
      tx.execute(sql`update reminder_messages set status = ${status}, ${column}, updated_at = ${ctx.clock.now().toISOString()} where provider_message_id = ${providerMessageId} and status in (${sql.join(earlier.map((name) => sql`${name}`), sql`, `)})`),
    );
  } else if (status === "failed") {
    await ctx.db.transaction((tx) =>
      tx.execute(sql`update reminder_messages set status = 'failed', last_error = ${error ?? "the provider reported a failure"}, updated_at = ${ctx.clock.now().toISOString()} where provider_message_id = ${providerMessageId} and status in ('sent', 'delivered')`),
    );
  }
}

