import type { ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, recordView } from "../../db/clinic-records";
import { appointmentTypes } from "../../db/schema";
import type { ListActor } from "../../http/clinic-resource";
import type { PageRequest } from "../../db/keyset";
import { userRecords } from "../users/service";
import type { CreateAppointmentTypeInput, UpdateAppointmentTypeInput } from "./model";

export const appointmentTypeRecords = clinicRecords(appointmentTypes, "Appointment type");
export type AppointmentTypeRow = typeof appointmentTypes.$inferSelect;

export const view = (row: AppointmentTypeRow) => recordView(row);

/** Every vet a type names must be a live user of the clinic. */
async function assertVets(ctx: ServiceContext, clinicId: string, vetIds: string[] | undefined) {
  for (const id of vetIds ?? []) await assertReferenced(ctx, clinicId, [{ field: "vet_ids", id, records: userRecords, what: "user" }]);
}

export async function create(ctx: ServiceContext, clinicId: string, input: CreateAppointmentTypeInput) {
  await assertVets(ctx, clinicId, input.vet_ids);
  return view(await appointmentTypeRecords.insert(ctx, clinicId, { ...input, name: input.name.trim() }));
}

export async function update(ctx: ServiceContext, clinicId: string, id: string, input: UpdateAppointmentTypeInput) {
  await appointmentTypeRecords.find(ctx, clinicId, id);
  await assertVets(ctx, clinicId, input.vet_ids);
  return view(await appointmentTypeRecords.update(ctx, clinicId, id, input.name ? { ...input, name: input.name.trim() } : input));
}

export const remove = (ctx: ServiceContext, clinicId: string, id: string) => appointmentTypeRecords.softDelete(ctx, clinicId, id);

export const list = (ctx: ServiceContext, { clinicId }: ListActor, _filters: unknown, page: PageRequest) => appointmentTypeRecords.page(ctx, clinicId, [], page);
