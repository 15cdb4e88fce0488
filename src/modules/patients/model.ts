import { t } from "elysia";
import { DateOnly, NullableString, StrictInteger, Timestamp, Uuid, ValueList } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";
import { SEXES, SPECIES } from "../../db/schema";

const Species = t.Union(SPECIES.map((s) => t.Literal(s)));
const Sex = t.Union(SEXES.map((s) => t.Literal(s)));
const nullable = <T extends Parameters<typeof t.Optional>[0]>(schema: T) => t.Optional(t.Union([schema, t.Null()]));

export const PatientModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  tutor_id: Uuid,
  name: t.String(),
  species: t.String(),
  breed: NullableString(),
  sex: NullableString(),
  birth_date: t.Union([DateOnly, t.Null()]),
  weight_grams: t.Union([t.Integer(), t.Null()]),
  microchip: NullableString(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const fields = {
  breed: nullable(t.String({ minLength: 1, maxLength: 100 })),
  sex: nullable(Sex),
  birth_date: nullable(DateOnly),
  weight_grams: nullable(StrictInteger({ minimum: 1, maximum: 2_000_000, description: "Grams" })),
  microchip: nullable(t.String({ pattern: "^[0-9A-Za-z]{9,20}$", examples: ["941000024567890"] })),
};

export const CreatePatientBody = t.Object({ tutor_id: Uuid, name: t.String({ minLength: 1, maxLength: 100 }), species: Species, ...fields });
export const UpdatePatientBody = t.Object(
  { tutor_id: t.Optional(Uuid), name: t.Optional(t.String({ minLength: 1, maxLength: 100 })), species: t.Optional(Species), ...fields },
  { minProperties: 1 },
);
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
