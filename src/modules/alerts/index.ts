import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { CreateAlertBody, AlertListQuery, AlertModel, UpdateAlertBody } from "./model";
import { alertResource } from "./service";

export const alertsModule = (context: AppContext) =>
  clinicResource(context, {
    name: "alerts",
    models: { item: AlertModel, create: CreateAlertBody, update: UpdateAlertBody, listQuery: AlertListQuery },
    service: alertResource,
    summaries: { list: "List alerts (cursor or offset form); filters status, kind, patient_id, date_from, date_to (due_date)" },
    conflicts: {},
  });
