import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { CreateVisitBody, VisitListQuery, VisitModel, UpdateVisitBody } from "./model";
import { visitResource } from "./service";

export const visitsModule = (context: AppContext) =>
  clinicResource(context, {
    name: "visits",
    models: { item: VisitModel, create: CreateVisitBody, update: UpdateVisitBody, listQuery: VisitListQuery },
    service: visitResource,
    summaries: { list: "List visits (cursor or offset form); filters status, date_from, date_to (scheduled_at), patient_id, vet_id", update: "Update a visit; `status` drives the state machine (409 INVALID_STATE_TRANSITION)" },
    conflicts: { update: true },
  });
