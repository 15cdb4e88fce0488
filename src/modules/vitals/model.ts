import { t } from "elysia";
import { Nullable, StrictInteger, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, orderQueryField, updatedSinceQueryField } from "../../http/pagination";

export const VitalsModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  patient_id: Uuid,
  visit_id: Nullable(Uuid),
  recorded_by: Nullable(Uuid),
  measured_at: Timestamp,
  weight_grams: Nullable(t.Integer()),
  temperature_dc: Nullable(t.Integer()),
  heart_rate_bpm: Nullable(t.Integer()),
  respiratory_rate_bpm: Nullable(t.Integer()),
  body_condition_score: Nullable(t.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/**
 * Plausible ranges across the species a clinic sees (a 20 g canary to a 1,500 kg horse; a
 * horse's 28 bpm to a hamster's 500): a value outside is a typing mistake, refused naming the field.
 */
export const VITALS_RANGES = {
  weight_grams: { minimum: 1, maximum: 2_000_000, description: "Grams (1 g – 2,000 kg)" },
  temperature_dc: { minimum: 250, maximum: 450, description: "Tenths of a degree Celsius: 385 = 38.5 °C (25.0–45.0 °C)" },
  heart_rate_bpm: { minimum: 5, maximum: 1_000, description: "Beats per minute (5–1,000)" },
  respiratory_rate_bpm: { minimum: 2, maximum: 300, description: "Breaths per minute (2–300)" },
  body_condition_score: { minimum: 1, maximum: 9, description: "Body condition score on the 1–9 scale" },
} as const;

export const MEASURES = Object.keys(VITALS_RANGES) as (keyof typeof VITALS_RANGES)[];

export const CreateVitalsBody = t.Object({
  measured_at: t.Optional(t.String({ format: "date-time", description: "When it was measured; now when left out" })),
  visit_id: t.Optional(Nullable(Uuid)),
  weight_grams: t.Optional(StrictInteger(VITALS_RANGES.weight_grams)),
  temperature_dc: t.Optional(StrictInteger(VITALS_RANGES.temperature_dc)),
  heart_rate_bpm: t.Optional(StrictInteger(VITALS_RANGES.heart_rate_bpm)),
  respiratory_rate_bpm: t.Optional(StrictInteger(VITALS_RANGES.respiratory_rate_bpm)),
  body_condition_score: t.Optional(StrictInteger(VITALS_RANGES.body_condition_score)),
});

export const VitalsListQuery = t.Object({ ...cursorQueryFields, ...orderQueryField, ...updatedSinceQueryField });

export type CreateVitalsInput = typeof CreateVitalsBody.static;
/** A measurement as the API answers it. */
export type VitalsView = typeof VitalsModel.static;
