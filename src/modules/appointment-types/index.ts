import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { appointmentTypeModels } from "./model";
import * as service from "./service";

/** What can be booked; every role reads the types, the owner defines them. */
export const appointmentTypesModule = (context: AppContext) =>
  clinicResource(context, { name: "appointment-types", models: appointmentTypeModels, records: service.appointmentTypeRecords, service, writeRoles: ["owner"] });
