import { t } from "elysia";
import { DateFilters, DateOnly, Nullable, NullableTimestamp, OptionalNullable, Timestamp, UpdateBody, Uuid, ValueList } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";
import { ALERT_KINDS, ALERT_STATUSES } from "../../db/schema";

const Kind = t.Union(ALERT_KINDS.map((k) => t.Literal(k)));
const Status = t.Union(ALERT_STATUSES.map((s) => t.Literal(s)));

export const AlertModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  patient_id: Nullable(Uuid),
  kind: t.String(),
  message: t.String(),
  status: t.String(),
  due_date: Nullable(DateOnly),
  resolved_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateAlertBody = t.Object({
  patient_id: OptionalNullable(Uuid),
  kind: Kind,
  message: t.String({ minLength: 1, maxLength: 1000 }),
  status: t.Optional(Status),
  due_date: OptionalNullable(DateOnly),
});

export const UpdateAlertBody = UpdateBody(CreateAlertBody);

export const AlertListQuery = t.Object({
  ...offsetQueryFields,
  ...DateFilters,
  status: t.Optional(ValueList(ALERT_STATUSES)),
  kind: t.Optional(ValueList(ALERT_KINDS)),
  patient_id: t.Optional(Uuid),
});

export type CreateAlertInput = typeof CreateAlertBody.static;
export type UpdateAlertInput = typeof UpdateAlertBody.static;
export type AlertFilters = typeof AlertListQuery.static;

/** The models of the five routes, for the clinic-resource factory. */
export const alertModels = { item: AlertModel, create: CreateAlertBody, update: UpdateAlertBody, listQuery: AlertListQuery };

/** An alert as the API answers it. */
export type AlertView = typeof AlertModel.static;
