import { t } from "elysia";
import { Nullable, NullableString, NullableTimestamp, OptionalNullable, Timestamp, UpdateBody, Uuid, ValueList } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";
import { REMINDER_STATES, SUPPRESSION_REASONS } from "../../db/schema";

const Channel = t.Union([t.Literal("email"), t.Literal("whatsapp")]);
const Kind = t.Union([t.Literal("vaccination_due"), t.Literal("appointment"), t.Literal("follow_up")]);
const State = t.Union([t.Literal("queued"), t.Literal("sent"), t.Literal("delivered"), t.Literal("read"), t.Literal("failed"), t.Literal("suppressed")]);
const LocalTime = (example: string) => t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", examples: [example], description: "HH:MM in the clinic's time zone" });

export const CreateRuleBody = t.Object({
  kind: Kind,
  name: t.String({ minLength: 1, maxLength: 200, examples: ["Vacunas: una semana antes"] }),
  offset: t.String({ pattern: "^[-+]?[0-9]{1,4}[mhd]$", description: "Relative to the subject's moment (a visit's start, a due day's start): -7d, -24h, -90m, 0d", examples: ["-7d"] }),
  channels: t.Array(Channel, { minItems: 1, maxItems: 2, uniqueItems: true, description: "In order of preference: the first the tutor consented to is used" }),
  email_subject: OptionalNullable(t.String({ minLength: 1, maxLength: 200, description: "May name {tutor}, {patient}, {clinic}, {date}, {time}, {what}" })),
  email_text: OptionalNullable(t.String({ minLength: 1, maxLength: 5000, description: "May name {tutor}, {patient}, {clinic}, {date}, {time}, {what}; unset: the clinic's default text" })),
  whatsapp_template: OptionalNullable(t.String({ pattern: "^[a-z0-9_]{1,512}$", description: "The approved template's name (required with the whatsapp channel)", examples: ["recordatorio_vacuna"] })),
  whatsapp_language: OptionalNullable(t.String({ pattern: "^[a-z]{2,3}(_[A-Z]{2})?$", examples: ["es", "es_CL"] })),
  whatsapp_parameters: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 10, description: "The template body's parameters in order, each a text with placeholders", examples: [["{tutor}", "{patient}", "{date}"]] })),
  quiet_start: t.Optional(LocalTime("20:00")),
  quiet_end: t.Optional(LocalTime("09:00")),
  enabled: t.Optional(t.Boolean()),
});
export type CreateRuleInput = typeof CreateRuleBody.static;
export const UpdateRuleBody = UpdateBody(CreateRuleBody);
export type UpdateRuleInput = typeof UpdateRuleBody.static;

export const RuleModel = t.Object({
  id: Uuid,
  kind: t.String(),
  name: t.String(),
  offset: t.String(),
  channels: t.Array(t.String()),
  email_subject: NullableString(),
  email_text: NullableString(),
  whatsapp_template: NullableString(),
  whatsapp_language: NullableString(),
  whatsapp_parameters: t.Array(t.String()),
  quiet_start: t.String(),
  quiet_end: t.String(),
  enabled: t.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const RuleListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export const ReminderListQuery = t.Object({
  ...cursorQueryFields,
  ...updatedSinceQueryField,
  state: t.Optional(ValueList(REMINDER_STATES)),
  channel: t.Optional(Channel),
  kind: t.Optional(Kind),
  patient_id: t.Optional(Uuid),
  tutor_id: t.Optional(Uuid),
  rule_id: t.Optional(Uuid),
});
export type ReminderFilters = typeof ReminderListQuery.static;

export const ReminderModel = t.Object({
  id: Uuid,
  rule_id: Uuid,
  kind: t.String(),
  subject_id: Uuid,
  patient_id: Uuid,
  tutor_id: Uuid,
  channel: t.String(),
  state: State,
  suppressed_reason: Nullable(t.String({ description: `Why it was not sent: ${SUPPRESSION_REASONS.join(", ")}` })),
  due_at: Timestamp,
  send_at: Timestamp,
  attempts: t.Integer(),
  error: NullableString({ description: "The provider's last error" }),
  sent_at: NullableTimestamp,
  delivered_at: NullableTimestamp,
  read_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ChannelStatusModel = t.Object({
  channels: t.Array(t.Object({ channel: t.String(), configured: t.Boolean(), settings: t.Array(t.String(), { description: "What to set to configure it" }) })),
});

export const LinkQuery = t.Object({ token: t.String({ minLength: 10, maxLength: 200 }) });

export const WhatsAppVerifyQuery = t.Object({
  "hub.mode": t.Optional(t.String({ maxLength: 50 })),
  "hub.verify_token": t.Optional(t.String({ maxLength: 500 })),
  "hub.challenge": t.Optional(t.String({ maxLength: 500 })),
});
