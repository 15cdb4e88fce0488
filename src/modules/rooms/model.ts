import { t } from "elysia";
import { Timestamp, UpdateBody, Uuid } from "../../http/common-model";
import { offsetQueryFields } from "../../http/pagination";

export const RoomModel = t.Object({ id: Uuid, clinic_id: Uuid, name: t.String(), created_at: Timestamp, updated_at: Timestamp });
export const CreateRoomBody = t.Object({ name: t.String({ minLength: 1, maxLength: 120, examples: ["Box 1"] }) });
export const UpdateRoomBody = UpdateBody(CreateRoomBody);
export const RoomListQuery = t.Object({ ...offsetQueryFields });

export type CreateRoomInput = typeof CreateRoomBody.static;
export type UpdateRoomInput = typeof UpdateRoomBody.static;

export const roomModels = { item: RoomModel, create: CreateRoomBody, update: UpdateRoomBody, listQuery: RoomListQuery };
