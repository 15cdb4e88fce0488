import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { CLINICAL_WRITERS } from "../notes/model";
import { CreateVaccinationBody, DueItemModel, DueQuery, ReminderBody, VaccinationListQuery, VaccinationModel } from "./model";
import * as service from "./service";

/** Vaccinations given, their next due dates, and the due list reception calls from. */
export const vaccinationsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ tags: ["vaccinations"] as never })
    .use(auth)
    .post(
      "/patients/:id/vaccinations",
      async ({ actor, params, body, status }) => status(201, await service.create(services, { ...actor, timezone: actor.clinic.timezone }, params.id, body)),
      {
        auth: CLINICAL_WRITERS,
        params: IdParams,
        body: CreateVaccinationBody,
        response: { 201: VaccinationModel, ...errorResponses(401, 403, 404, 422) },
        detail: { summary: "Record a dose; a later dose for the same disease closes the earlier due date; an expired lot is refused" },
      },
    )
    .get(
      "/patients/:id/vaccinations",
      ({ actor, params, query }) =>
        query.updated_since !== undefined
          ? paginator.changes(query, service.vaccinationRecords.changes, (since, page) => service.changesForPatient(services, actor.clinicId, params.id, since, page), service.view)
          : paginator.list(query, service.vaccinationRecords.keyset, (page) => service.listForPatient(services, actor.clinicId, params.id, page), service.view),
      {
        auth: true,
        params: IdParams,
        query: VaccinationListQuery,
        response: { 200: CursorPage(withDeletedAt(VaccinationModel)), ...errorResponses(400, 401, 404, 422) },
        detail: { summary: "A patient's vaccinations, oldest first" },
      },
    )
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
