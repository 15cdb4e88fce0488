import type { ServiceContext } from "../../db/client";
import { clinicRecords, recordView } from "../../db/clinic-records";
import { rooms } from "../../db/schema";
import type { ListActor } from "../../http/clinic-resource";
import type { PageRequest } from "../../db/keyset";
import type { CreateRoomInput, UpdateRoomInput } from "./model";

export const roomRecords = clinicRecords(rooms, "Room");
export const view = (row: typeof rooms.$inferSelect) => recordView(row);

export const create = async (ctx: ServiceContext, clinicId: string, input: CreateRoomInput) => view(await roomRecords.insert(ctx, clinicId, { name: input.name.trim() }));
export const update = async (ctx: ServiceContext, clinicId: string, id: string, input: UpdateRoomInput) =>
  view(await roomRecords.update(ctx, clinicId, id, input.name ? { name: input.name.trim() } : input));
export const remove = (ctx: ServiceContext, clinicId: string, id: string) => roomRecords.softDelete(ctx, clinicId, id);
export const list = (ctx: ServiceContext, { clinicId }: ListActor, _filters: unknown, page: PageRequest) => roomRecords.page(ctx, clinicId, [], page);
