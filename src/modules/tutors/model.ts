import { t } from "elysia";
import { Nullable, NullableString, OptionalNullable, PhoneNumber, Timestamp, UpdateBody, Uuid } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";

const Phone = PhoneNumber;

export const TutorModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  name: t.String(),
  email: NullableString(),
  phone: NullableString(),
  national_id: NullableString(),
  address: NullableString(),
  notes: NullableString(),
  blocked_at: Nullable(Timestamp, { description: "Set when the tutor's data was erased: the name reads \"dato bloqueado\", nothing is sent to them" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const fields = {
  email: OptionalNullable(t.String({ format: "email", maxLength: 254 })),
  phone: OptionalNullable(Phone),
  national_id: OptionalNullable(t.String({ minLength: 1, maxLength: 20, examples: ["12.345.678-5"] })),
  address: OptionalNullable(t.String({ maxLength: 300 })),
  notes: OptionalNullable(t.String({ maxLength: 2000 })),
};

export const CreateTutorBody = t.Object({ name: t.String({ minLength: 1, maxLength: 200 }), ...fields });
export const UpdateTutorBody = UpdateBody(CreateTutorBody);
export const TutorListQuery = t.Object({
  ...offsetQueryFields,
  q: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "Case-insensitive part of the name" })),
});

export type CreateTutorInput = typeof CreateTutorBody.static;
export type UpdateTutorInput = typeof UpdateTutorBody.static;

/** The models of the five routes, for the clinic-resource factory. */
export const tutorModels = { item: TutorModel, create: CreateTutorBody, update: UpdateTutorBody, listQuery: TutorListQuery };

/** A tutor as the API answers it. */
export type TutorView = typeof TutorModel.static;
