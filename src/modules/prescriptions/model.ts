import { t } from "elysia";
import { Nullable, NullableString, NullableTimestamp, StrictInteger, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";

export const PrescriptionModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  patient_id: Uuid,
  visit_id: Nullable(Uuid),
  prescribed_by: Uuid,
  drug: t.String(),
  dose: t.String(),
  route: t.String(),
  frequency: t.String(),
  duration_days: Nullable(t.Integer()),
  quantity: NullableString(),
  instructions: NullableString(),
  status: t.Union([t.Literal("active"), t.Literal("cancelled")]),
  cancelled_at: NullableTimestamp,
  cancelled_by: Nullable(Uuid),
  cancel_reason: NullableString(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Short = (maxLength: number, examples: string[]) => t.String({ minLength: 1, maxLength, examples });

export const CreatePrescriptionBody = t.Object({
  visit_id: t.Optional(Nullable(Uuid)),
  drug: Short(200, ["Meloxicam 1.5 mg/ml oral suspension"]),
  dose: Short(100, ["0.1 mg/kg"]),
  route: Short(50, ["oral"]),
  frequency: Short(100, ["every 24 h"]),
  duration_days: t.Optional(Nullable(StrictInteger({ minimum: 1, maximum: 3650 }))),
  quantity: t.Optional(Nullable(Short(100, ["1 bottle of 10 ml"]))),
  instructions: t.Optional(Nullable(t.String({ minLength: 1, maxLength: 2000 }))),
});

export const CancelPrescriptionBody = t.Object({ reason: t.String({ minLength: 1, maxLength: 1000 }) });
export const PrescriptionListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export type CreatePrescriptionInput = typeof CreatePrescriptionBody.static;
/** A prescription as the API answers it. */
export type PrescriptionView = typeof PrescriptionModel.static;
