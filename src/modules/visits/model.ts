import { t } from "elysia";
import { DateFilters, NullableString, Timestamp, Uuid, ValueList } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";
import { VISIT_STATUSES } from "../../db/schema";

const VisitStatus = t.Union(VISIT_STATUSES.map((s) => t.Literal(s)));
const nullableText = (max: number) => t.Optional(t.Union([t.String({ maxLength: max }), t.Null()]));

export const VisitModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  patient_id: Uuid,
  vet_id: t.Union([Uuid, t.Null()]),
  status: t.String(),
  scheduled_at: Timestamp,
  started_at: t.Union([Timestamp, t.Null()]),
  completed_at: t.Union([Timestamp, t.Null()]),
  reason: NullableString(),
  diagnosis: NullableString(),
  notes: NullableString(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateVisitBody = t.Object({
  patient_id: Uuid,
  vet_id: t.Optional(t.Union([Uuid, t.Null()])),
  scheduled_at: t.String({ format: "date-time", examples: ["2026-01-15T14:30:00Z"] }),
  reason: nullableText(500),
  notes: nullableText(5000),
});

export const UpdateVisitBody = t.Object(
  {
    status: t.Optional(VisitStatus),
    patient_id: t.Optional(Uuid),
    vet_id: t.Optional(t.Union([Uuid, t.Null()])),
    scheduled_at: t.Optional(t.String({ format: "date-time" })),
    reason: nullableText(500),
    diagnosis: nullableText(5000),
    notes: nullableText(5000),
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
