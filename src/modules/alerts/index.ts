import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { alertModels } from "./model";
import * as service from "./service";

export const alertsModule = (context: AppContext) =>
  clinicResource(context, { name: "alerts", models: alertModels, records: service.alertRecords, service, summaries: { list: "List alerts (cursor or offset form); filters status, kind, patient_id, date_from, date_to (due_date)" } });
