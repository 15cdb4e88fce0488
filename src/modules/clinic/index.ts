import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { ClinicModel, UpdateClinicBody } from "./model";
import * as clinicService from "./service";
import { CalendarSettingsModel, UpdateCalendarSettingsBody } from "../schedules/model";
import { getCalendarSettings, updateCalendarSettings } from "./calendar-settings";

/** The clinic's own settings: every role reads them, the owner changes them. */
export const clinicModule = ({ auth, services }: AppContext) =>
  new Elysia({ prefix: "/clinic", tags: ["clinic"] as never })
    .use(auth)
    .get("/", ({ actor }) => clinicService.getClinic(services, actor.clinicId), {
      auth: true,
      response: { 200: ClinicModel, ...errorResponses(401) },
      detail: { summary: "The clinic's settings (issuer data for SII documents, time zone, tax, currency, plan)" },
    })
    .patch("/", ({ actor, body }) => clinicService.updateClinic(services, actor.clinicId, body), {
      auth: ["owner"] as const,
      body: UpdateClinicBody,
      response: { 200: ClinicModel, ...errorResponses(401, 403, 409, 422) },
      detail: { summary: "Change the clinic's settings (owner)" },
    })
    .get("/calendar-settings", ({ actor }) => getCalendarSettings(services, actor.clinicId), {
      auth: true,
      response: { 200: CalendarSettingsModel, ...errorResponses(401) },
      detail: { summary: "The clinic's calendar and online-booking settings (opening hours, public slug, confirmation, cancellation window)" },
    })
    .patch("/calendar-settings", ({ actor, body }) => updateCalendarSettings(services, actor.clinicId, body), {
      auth: ["owner"] as const,
      body: UpdateCalendarSettingsBody,
      response: { 200: CalendarSettingsModel, ...errorResponses(401, 403, 409, 422) },
      detail: { summary: "Change the calendar and online-booking settings (owner); a slug another clinic uses is 409" },
    });
