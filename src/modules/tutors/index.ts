import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { CreateTutorBody, TutorListQuery, TutorModel, UpdateTutorBody } from "./model";
import { tutorResource } from "./service";

export const tutorsModule = (context: AppContext) =>
  clinicResource(context, {
    name: "tutors",
    models: { item: TutorModel, create: CreateTutorBody, update: UpdateTutorBody, listQuery: TutorListQuery },
    service: tutorResource,
    summaries: { list: "List tutors (cursor or offset form); q searches names", remove: "Soft delete; 409 while open work depends on it (details.blocked_by)" },
    conflicts: { remove: true },
  });
