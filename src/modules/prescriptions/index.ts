import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { patientRecords } from "../../http/patient-records";
import { CLINICAL_WRITERS } from "../notes/model";
import { CancelPrescriptionBody, CreatePrescriptionBody, PrescriptionListQuery, PrescriptionModel } from "./model";
import * as service from "./service";

/** Prescriptions: issued by a vet or the owner, never edited, cancelled with a reason. */
export const prescriptionsModule = (context: AppContext) => {
  const { auth, services } = context;
  return new Elysia({ tags: ["prescriptions"] as never })
    .use(
      patientRecords(context, {
        name: "prescriptions",
        models: { item: PrescriptionModel, create: CreatePrescriptionBody, listQuery: PrescriptionListQuery },
        keysets: { list: service.prescriptionRecords.keyset, changes: service.prescriptionRecords.changes },
        service: { create: service.create, list: service.ofPatient.list, changedSince: service.ofPatient.changedSince, view: service.view },
        writers: CLINICAL_WRITERS,
        summaries: { create: "Issue a prescription (never edited afterwards)", list: "A patient's prescriptions, oldest first, cancelled ones included" },
      }),
    )
    .use(auth)
    .get("/prescriptions/:id", async ({ actor, params }) => service.view(await service.prescriptionRecords.find(services, actor.clinicId, params.id)), {
      auth: true,
      params: IdParams,
      response: { 200: PrescriptionModel, ...errorResponses(401, 404, 422) },
    })
    .post("/prescriptions/:id/cancel", ({ actor, params, body }) => service.cancel(services, actor, params.id, body.reason), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: CancelPrescriptionBody,
      response: { 200: PrescriptionModel, ...errorResponses(401, 403, 404, 409, 422) },
      detail: { summary: "Cancel a prescription with a reason (who and when are recorded)" },
    });
};
