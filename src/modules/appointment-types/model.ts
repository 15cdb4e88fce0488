import { t } from "elysia";
import { StrictInteger, Timestamp, UpdateBody, Uuid } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";
import { SPECIES } from "../../db/schema";

const Species = t.Union(SPECIES.map((s) => t.Literal(s)));

export const AppointmentTypeModel = t.Object({
  id: Uuid,
  clinic_id: Uuid,
  name: t.String(),
  duration_minutes: t.Integer(),
  buffer_before_minutes: t.Integer(),
  buffer_after_minutes: t.Integer(),
  species: t.Array(t.String(), { description: "Species it is for; empty = any" }),
  vet_ids: t.Array(Uuid, { description: "Vets who can do it; empty = every vet" }),
  room_required: t.Boolean(),
  bookable_online: t.Boolean(),
  min_notice_minutes: t.Integer(),
  max_advance_days: t.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreateAppointmentTypeBody = t.Object({
  name: t.String({ minLength: 1, maxLength: 120, examples: ["Consulta general"] }),
  duration_minutes: StrictInteger({ minimum: 5, maximum: 1440, examples: [30] }),
  buffer_before_minutes: t.Optional(StrictInteger({ minimum: 0, maximum: 240 })),
  buffer_after_minutes: t.Optional(StrictInteger({ minimum: 0, maximum: 240 })),
  species: t.Optional(t.Array(Species, { maxItems: SPECIES.length, uniqueItems: true })),
  vet_ids: t.Optional(t.Array(Uuid, { maxItems: 200, uniqueItems: true })),
  room_required: t.Optional(t.Boolean()),
  bookable_online: t.Optional(t.Boolean()),
  min_notice_minutes: t.Optional(StrictInteger({ minimum: 0, maximum: 60 * 24 * 60 })),
  max_advance_days: t.Optional(StrictInteger({ minimum: 1, maximum: 730 })),
});
export const UpdateAppointmentTypeBody = UpdateBody(CreateAppointmentTypeBody);
export const AppointmentTypeListQuery = t.Object({ ...offsetQueryFields });

export type CreateAppointmentTypeInput = typeof CreateAppointmentTypeBody.static;
export type UpdateAppointmentTypeInput = typeof UpdateAppointmentTypeBody.static;
export type AppointmentTypeView = typeof AppointmentTypeModel.static;

export const appointmentTypeModels = { item: AppointmentTypeModel, create: CreateAppointmentTypeBody, update: UpdateAppointmentTypeBody, listQuery: AppointmentTypeListQuery };
