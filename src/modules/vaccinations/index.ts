import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage } from "../../http/pagination";
import { patientRecords } from "../../http/patient-records";
import { CLINICAL_WRITERS } from "../notes/model";
import { CreateVaccinationBody, DueItemModel, DueQuery, ReminderBody, VaccinationListQuery, VaccinationModel } from "./model";
import * as service from "./service";

/** Vaccinations given, their next due dates, and the due list reception calls from. */
export const vaccinationsModule = (context: AppContext) => {
  const { auth, services, paginator } = context;
  return new Elysia({ tags: ["vaccinations"] as never })
    .use(
      patientRecords(context, {
        name: "vaccinations",
        models: { item: VaccinationModel, create: CreateVaccinationBody, listQuery: VaccinationListQuery },
        keysets: { list: service.vaccinationRecords.keyset, changes: service.vaccinationRecords.changes },
        service: {
          // Due dates are days in the clinic's time zone.
          create: (ctx, actor, patientId, input) => service.create(ctx, { ...actor, timezone: actor.clinic.timezone }, patientId, input),
          list: service.ofPatient.list,
          changedSince: service.ofPatient.changedSince,
          view: service.view,
        },
        writers: CLINICAL_WRITERS,
        summaries: {
          create: "Record a dose; a later dose for the same disease closes the earlier due date; an expired lot is refused",
          list: "A patient's vaccinations, oldest first",
        },
      }),
    )
    .use(auth)
    .get(
      "/vaccinations/due",
      ({ actor, query }) => paginator.list(query, service.DUE_KEYSET, (page) => service.duePage(services, { clinicId: actor.clinicId, timezone: actor.clinic.timezone }, query, page), service.dueView),
      {
        auth: true,
        query: DueQuery,
        response: { 200: CursorPage(DueItemModel), ...errorResponses(400, 401, 422) },
        detail: { summary: "Vaccines due from `from` (today) through `to`, and every overdue one (overdue: true), with the tutor to call" },
      },
    )
    .get("/vaccinations/:id", async ({ actor, params }) => service.view(await service.vaccinationRecords.find(services, actor.clinicId, params.id)), {
      auth: true,
      params: IdParams,
      response: { 200: VaccinationModel, ...errorResponses(401, 404, 422) },
    })
    .patch("/vaccinations/:id/reminder", ({ actor, params, body }) => service.setReminder(services, actor.clinicId, params.id, body.reminder_status), {
      auth: true,
      params: IdParams,
      body: ReminderBody,
      response: { 200: VaccinationModel, ...errorResponses(401, 404, 409, 422) },
      detail: { summary: "Reception's call on a due date: pending, contacted, booked or declined" },
    });
};
