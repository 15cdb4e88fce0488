import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { patientModels } from "./model";
import * as service from "./service";

export const patientsModule = (context: AppContext) =>
  clinicResource(context, { name: "patients", models: patientModels, records: service.patientRecords, service, summaries: { list: "List patients (cursor or offset form); filters q, tutor_id, species", remove: "Soft delete; 409 while open work depends on it (details.blocked_by)" }, conflicts: { remove: true } });
