import { t } from "elysia";
import { DateOnly, Nullable, NullableString, NullableTimestamp, Timestamp, Uuid, ValueList } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";
import { REMINDER_STATUSES } from "../../db/schema";

const ReminderStatus = t.Union(REMINDER_STATUSES.map((s) => t.Literal(s)));

export const VaccinationModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  patient_id: Uuid,
  visit_id: Nullable(Uuid),
  vaccine: t.String(),
  diseases: t.Array(t.String()),
  lot: NullableString(),
  lot_expires_on: Nullable(DateOnly),
  given_at: Nullable(Timestamp, { description: "When the dose was given; null for a due date alone (as older vaccine reminders became)" }),
  given_by: Nullable(Uuid),
  next_due_on: Nullable(DateOnly),
  reminder_status: t.String(),
  reminder_updated_at: NullableTimestamp,
  due_closed_at: Nullable(Timestamp, { description: "When a later dose for the same disease closed this due date" }),
  due_closed_by: Nullable(Uuid, { description: "The vaccination that closed it" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateVaccinationBody = t.Object({
  vaccine: t.String({ minLength: 1, maxLength: 200, description: "Product name", examples: ["Nobivac Rabies"] }),
  diseases: t.Array(t.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,49}$", description: "Lower-case label", examples: ["rabies"] }), { minItems: 1, maxItems: 12, uniqueItems: true, description: "What it protects against, e.g. [\"rabies\"] or [\"distemper\", \"parvovirus\", \"hepatitis\"]" }),
  lot: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 100 }))),
  lot_expires_on: t.Optional(Nullable(DateOnly)),
  given_at: t.Optional(t.String({ format: "date-time", description: "Now when left out" })),
  given_by: t.Optional(Nullable(Uuid)),
  visit_id: t.Optional(Nullable(Uuid)),
  next_due_on: t.Optional(Nullable(DateOnly)),
});

export const ReminderBody = t.Object({ reminder_status: ReminderStatus });

export const VaccinationListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export const DueQuery = t.Object({
  ...cursorQueryFields,
  from: t.Optional(t.String({ format: "date", description: "Inclusive; today in the clinic's time zone when left out" })),
  to: t.Optional(t.String({ format: "date", description: "Inclusive; `from` + 30 days when left out" })),
  reminder_status: t.Optional(ValueList(REMINDER_STATUSES)),
});

export const DueItemModel = t.Object({
  id: Uuid,
  due_on: DateOnly,
  overdue: t.Boolean({ description: "Due before today (in the clinic's time zone)" }),
  vaccine: t.String(),
  diseases: t.Array(t.String()),
  given_at: NullableTimestamp,
  reminder_status: t.String(),
  reminder_updated_at: NullableTimestamp,
  patient: t.Object({ id: Uuid, name: t.String(), species: t.String() }),
  tutor: t.Object({ id: Uuid, name: t.String(), phone: NullableString() }),
});

export type CreateVaccinationInput = typeof CreateVaccinationBody.static;
export type DueFilters = typeof DueQuery.static;
/** A vaccination as the API answers it. */
export type VaccinationView = typeof VaccinationModel.static;
export type DueItemView = typeof DueItemModel.static;
