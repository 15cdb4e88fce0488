import { Timestamp, Uuid } from "../../http/common-model";

/** Fields every billing record shows. */
export const record = { id: Uuid, clinic_id: Uuid, created_at: Timestamp, updated_at: Timestamp };
