import { t } from "elysia";
import { DateOnly, Nullable, NullableString, OptionalNullable, StrictInteger, Timestamp, UpdateBody, Uuid, ValueList } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";
import { SEXES, SPECIES } from "../../db/schema";

const Species = t.Union(SPECIES.map((s) => t.Literal(s)));
const Sex = t.Union(SEXES.map((s) => t.Literal(s)));

export const PatientModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  tutor_id: Uuid,
  name: t.String(),
  species: t.String(),
  breed: NullableString(),
  sex: NullableString(),
  birth_date: Nullable(DateOnly),
  weight_grams: Nullable(t.Integer()),
  microchip: NullableString(),
  deceased_on: Nullable(DateOnly, { description: "The day the patient died; it ends every reminder about it" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const fields = {
  breed: OptionalNullable(t.String({ minLength: 1, maxLength: 100 })),
  sex: OptionalNullable(Sex),
  birth_date: OptionalNullable(DateOnly),
  weight_grams: OptionalNullable(StrictInteger({ minimum: 1, maximum: 2_000_000, description: "Grams. Recorded as a weighing at this moment (it joins the vitals); the patient always shows its latest measured weight, so null cannot clear it" })),
  microchip: OptionalNullable(t.String({ pattern: "^[0-9A-Za-z]{9,20}$", examples: ["941000024567890"] })),
  deceased_on: OptionalNullable(DateOnly),
};

export const CreatePatientBody = t.Object({ tutor_id: Uuid, name: t.String({ minLength: 1, maxLength: 100 }), species: Species, ...fields });
export const UpdatePatientBody = UpdateBody(CreatePatientBody);
export const PatientListQuery = t.Object({
  ...offsetQueryFields,
  q: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "Case-insensitive part of the name" })),
  tutor_id: t.Optional(Uuid),
  species: t.Optional(ValueList(SPECIES)),
});

export type CreatePatientInput = typeof CreatePatientBody.static;
export type UpdatePatientInput = typeof UpdatePatientBody.static;
export type PatientFilters = typeof PatientListQuery.static;

/** The models of the five routes, for the clinic-resource factory. */
export const patientModels = { item: PatientModel, create: CreatePatientBody, update: UpdatePatientBody, listQuery: PatientListQuery };

/** A patient as the API answers it. */
export type PatientView = typeof PatientModel.static;
