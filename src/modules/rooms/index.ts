import type { AppContext } from "../../context";
import { clinicResource } from "../../http/clinic-resource";
import { roomModels } from "./model";
import * as service from "./service";

/** The clinic's consulting rooms; every role reads them, the owner defines them. */
export const roomsModule = (context: AppContext) => clinicResource(context, { name: "rooms", models: roomModels, records: service.roomRecords, service, writeRoles: ["owner"] });
