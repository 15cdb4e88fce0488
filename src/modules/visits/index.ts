import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { visitModels } from "./model";
import * as service from "./service";

export const visitsModule = (context: AppContext) =>
  clinicResource(context, { name: "visits", models: visitModels, records: service.visitRecords, service, summaries: { list: "List visits (cursor or offset form); filters status, date_from, date_to (scheduled_at), patient_id, vet_id", update: "Update a visit; `status` drives the state machine (409 INVALID_STATE_TRANSITION); a time, vet or room already held is 409 SLOT_TAKEN" }, conflicts: { create: true, update: true } });
