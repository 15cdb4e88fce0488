import type { AppContext } from "../../context";
import { patientRecords } from "../../http/patient-records";
import { CLINICAL_WRITERS } from "../notes/model";
import { CreateVitalsBody, VitalsListQuery, VitalsModel } from "./model";
import * as service from "./service";

/** A patient's vitals over time; each weight keeps the patient's `weight_grams` in step. */
export const vitalsModule = (context: AppContext) =>
  patientRecords(context, {
    name: "vitals",
    models: { item: VitalsModel, create: CreateVitalsBody, listQuery: VitalsListQuery },
    keysets: { list: service.VITALS_KEYSET, changes: service.vitalsRecords.changes },
    service: { create: service.create, list: service.list, changedSince: service.changesOfPatient, view: service.view },
    writers: CLINICAL_WRITERS,
    summaries: {
      create: "Record vitals (at least one measurement, each within its plausible range)",
      list: "A patient's vitals by the time they were measured (order=desc: latest first)",
    },
  });
