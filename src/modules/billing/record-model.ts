import { t } from "elysia";
import { Timestamp, Uuid } from "../../http/common-model";

/** Fields every billing record shows. */
export const NullableTimestamp = t.Union([Timestamp, t.Null()]);
export const record = { id: Uuid, clinic_id: Uuid, created_at: Timestamp, updated_at: Timestamp };
