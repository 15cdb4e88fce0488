import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { tutorModels } from "./model";
import * as service from "./service";

export const tutorsModule = (context: AppContext) =>
  clinicResource(context, { name: "tutors", models: tutorModels, records: service.tutorRecords, service, summaries: { list: "List tutors (cursor or offset form); q searches names", remove: "Soft delete; 409 while open work depends on it (details.blocked_by)" }, conflicts: { remove: true } });
