import { t } from "elysia";
import { DateFilters, Nullable, NullableString, NullableTimestamp, OptionalNullable, Timestamp, Uuid, ValueList } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";
import { VISIT_STATUSES } from "../../db/schema";

const VisitStatus = t.Union(VISIT_STATUSES.map((s) => t.Literal(s)));

export const VisitModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  patient_id: Uuid,
  vet_id: Nullable(Uuid),
  status: t.String(),
  scheduled_at: Timestamp,
  ends_at: Timestamp,
  appointment_type_id: Nullable(Uuid),
  room_id: Nullable(Uuid),
  buffer_before_minutes: t.Integer({ description: "The vet and the room are held this long before the start" }),
  buffer_after_minutes: t.Integer({ description: "The vet and the room are held this long after the end" }),
  revision: t.Integer({ description: "Bumped on every change" }),
  started_at: NullableTimestamp,
  completed_at: NullableTimestamp,
  reason: NullableString(),
  diagnosis: NullableString(),
  notes: NullableString(),
  confirmed_at: Nullable(Timestamp, { description: "When the tutor confirmed attendance through a reminder's link" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateVisitBody = t.Object({
  patient_id: Uuid,
  vet_id: OptionalNullable(Uuid),
  scheduled_at: t.String({ format: "date-time", examples: ["2026-01-15T14:30:00Z"] }),
  ends_at: t.Optional(t.String({ format: "date-time", description: "Default: the start plus the type's duration, or 30 minutes" })),
  appointment_type_id: OptionalNullable(Uuid),
  room_id: OptionalNullable(Uuid),
  reason: OptionalNullable(t.String({ maxLength: 500 })),
  notes: OptionalNullable(t.String({ maxLength: 5000 })),
});

export const UpdateVisitBody = t.Object(
  {
    status: t.Optional(VisitStatus),
    patient_id: t.Optional(Uuid),
    vet_id: OptionalNullable(Uuid),
    scheduled_at: t.Optional(t.String({ format: "date-time" })),
    ends_at: t.Optional(t.String({ format: "date-time", description: "Moving the start without it keeps the visit's length" })),
    appointment_type_id: OptionalNullable(Uuid),
    room_id: OptionalNullable(Uuid),
    reason: OptionalNullable(t.String({ maxLength: 500 })),
    diagnosis: OptionalNullable(t.String({ maxLength: 5000 })),
    notes: OptionalNullable(t.String({ maxLength: 5000 })),
  },
  { minProperties: 1 },
);

export const VisitFilterFields = {
  ...DateFilters,
  status: t.Optional(ValueList(VISIT_STATUSES)),
  patient_id: t.Optional(Uuid),
  vet_id: t.Optional(Uuid),
};
export const VisitListQuery = t.Object({ ...offsetQueryFields, ...VisitFilterFields });

export type CreateVisitInput = typeof CreateVisitBody.static;
export type UpdateVisitInput = typeof UpdateVisitBody.static;
export type VisitFilters = { date_from?: string; date_to?: string; status?: string; patient_id?: string; vet_id?: string };

/** The models of the five routes, for the clinic-resource factory. */
export const visitModels = { item: VisitModel, create: CreateVisitBody, update: UpdateVisitBody, listQuery: VisitListQuery };

/** A visit as the API answers it. */
export type VisitView = typeof VisitModel.static;
