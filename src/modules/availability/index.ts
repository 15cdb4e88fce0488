import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { AvailabilityModel, AvailabilityQuery } from "./model";
import { availabilityForType, slotView } from "./service";

/** Free slots for an appointment type: what staff see before booking. */
export const availabilityModule = ({ auth, services }: AppContext) =>
  new Elysia({ prefix: "/availability", tags: ["availability"] as never }).use(auth).get(
    "/",
    async ({ actor, query }) => {
      const { slots, timezone } = await availabilityForType(services, actor.clinicId, query.appointment_type_id, { from: query.from, to: query.to, vetId: query.vet_id });
      return { data: slots.map(slotView), timezone };
    },
    {
      auth: true,
      query: AvailabilityQuery,
      response: { 200: AvailabilityModel, ...errorResponses(401, 404, 422) },
      detail: { summary: "Free slots for an appointment type (at most 31 days; times in UTC, days in the clinic's time zone)" },
    },
  );
