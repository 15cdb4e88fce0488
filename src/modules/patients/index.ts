import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { PageResponse } from "../../http/pagination";
import { CreatePatientBody, PatientListQuery, PatientModel, UpdatePatientBody } from "./model";
import * as patientsService from "./service";

export const PATIENT_LIST = { list: "patients", sort: ["created_at:date", "id:text"] } as const;

export const patientsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/patients", tags: ["patients"] as never })
    .use(auth)
    .guard({ auth: true })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, PATIENT_LIST);
        const result = await patientsService.listPatients(services, actor.clinicId, query, page);
        return paginator.respond(page, result, PATIENT_LIST, patientsService.patientView);
      },
      { query: PatientListQuery, response: { 200: PageResponse(PatientModel), ...errorResponses(400, 401, 422) }, detail: { summary: "List patients (cursor or offset form); filters q, tutor_id, species" } },
    )
    .post("/", async ({ actor, body, status }) => status(201, await patientsService.createPatient(services, actor.clinicId, body)), {
      body: CreatePatientBody,
      response: { 201: PatientModel, ...errorResponses(401, 422) },
    })
    .get("/:id", ({ actor, params }) => patientsService.getPatient(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: PatientModel, ...errorResponses(401, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }) => patientsService.updatePatient(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdatePatientBody,
      response: { 200: PatientModel, ...errorResponses(401, 404, 422) },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await patientsService.deletePatient(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 404, 409, 422) }, detail: { summary: "Soft delete; 409 while open work depends on it (details.blocked_by)" } },
    );
