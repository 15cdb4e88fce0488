import { eq } from "drizzle-orm";
import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { visits } from "../../db/schema";
import { errorResponses } from "../../http/common-model";
import { TrustedProxies } from "../../http/rate-limit";
import { AppError } from "../../lib/errors";
import { BookingAnswerModel, BookingTokenHeaders, CreateBookingBody, ManageBookingBody, PublicAvailabilityModel, PublicAvailabilityQuery, PublicClinicModel, SlugParams } from "./model";
import * as booking from "./service";

type Listener = Parameters<TrustedProxies["clientIp"]>[0];

/**
 * Online booking for tutors, without an account: the clinic's public page data, its free slots,
 * booking, and the manage link's routes (the link's signed token in `X-Booking-Token`, never in
 * the path, so it stays out of request logs). Rate limited per address and per clinic.
 */
export const bookingModule = (context: AppContext) => {
  const { services, rateLimits, config, database, clock, idempotency } = context;
  const proxies = new TrustedProxies(config.trustedProxies);
  const links = new booking.ManageLinks(config.jwtSecret);
  const baseUrlOf = (request: Request) => config.publicUrl ?? new URL(request.url).origin;
  const admit = (server: Listener, request: Request, set: { headers: Record<string, unknown> }, clinicKey: string) => {
    Object.assign(set.headers, rateLimits.admitPublicCall(proxies.clientIp(server, request), clinicKey));
  };
  /** Changes made through these routes are the tutor's, as the audit trail names them. */
  const asTutor = (how: string) => {
    const changes = database.changeContexts.current();
    if (changes) changes.actor = { type: "system", id: null, name: `tutor (${how})` };
  };
  /** A manage call counts against the clinic of the booking its token names (unverified tokens share one budget). */
  const clinicOfToken = async (token: string | undefined) => {
    try {
      const visitId = links.verify(token, clock.now());
      const [row] = await services.db.select({ clinic_id: visits.clinic_id }).from(visits).where(eq(visits.id, visitId));
      return row?.clinic_id ?? "unknown-booking";
    } catch {
      return "invalid-booking-link";
    }
  };
  const limited = { "x-rate-limited": true } as const;

  const clinicsRoutes = new Elysia({ prefix: "/public/clinics", tags: ["booking"] as never })
    .use(idempotency)
    .get(
      "/:slug",
      async ({ params, request, server, set }) => {
        admit(server, request, set, `slug:${params.slug.toLowerCase()}`);
        return booking.publicClinic(services, await booking.clinicBySlug(services, params.slug));
      },
      {
        params: SlugParams,
        response: { 200: PublicClinicModel, ...errorResponses(404, 422, 429) },
        detail: { ...limited, summary: "A clinic's online booking page: its name, address, the appointment types it takes online, its vets when it shows them, and the consent wording" },
      },
    )
    .get(
      "/:slug/availability",
      async ({ params, query, request, server, set }) => {
        admit(server, request, set, `slug:${params.slug.toLowerCase()}`);
        return booking.publicAvailability(services, await booking.clinicBySlug(services, params.slug), query);
      },
      {
        params: SlugParams,
        query: PublicAvailabilityQuery,
        response: { 200: PublicAvailabilityModel, ...errorResponses(404, 422, 429) },
        detail: { ...limited, summary: "Free slots of a type taken online (the staff computation, at most 31 days; vet ids only when the clinic shows its vets)" },
      },
    )
    .post(
      "/:slug/bookings",
      async ({ params, body, request, server, set, idempotently }) => {
        admit(server, request, set, `slug:${params.slug.toLowerCase()}`);
        if (!request.headers.get("idempotency-key")) throw new AppError("INVALID_IDEMPOTENCY_KEY", "Idempotency-Key is required: a UUID the form makes once per booking, so a retry never books twice");
        const clinic = await booking.clinicBySlug(services, params.slug);
        asTutor("online booking");
        return idempotently(clinic.id, body, (db) => booking.book({ ...services, db }, clinic, body, links, baseUrlOf(request)));
      },
      {
        params: SlugParams,
        body: CreateBookingBody,
        response: { 200: BookingAnswerModel, 201: BookingAnswerModel, ...errorResponses(400, 404, 409, 422, 429) },
        detail: {
          ...limited,
          "x-idempotent": true,
          "x-idempotency-required": true,
          summary: "Book a slot as a tutor (Idempotency-Key required): the visit is requested (or scheduled when the clinic confirms online bookings itself); the answer carries the manage link",
          "x-statuses": { "409": "SLOT_TAKEN with conflicting_visit_id and up to three free alternatives, or an Idempotency-Key conflict" },
        },
      },
    );

  const manageRoutes = new Elysia({ prefix: "/public/bookings", tags: ["booking"] as never })
    .get(
      "/manage",
      async ({ headers, request, server, set }) => {
        admit(server, request, set, await clinicOfToken(headers["x-booking-token"]));
        return booking.viewBooking(services, links, baseUrlOf(request), headers["x-booking-token"]);
      },
      {
        headers: BookingTokenHeaders,
        response: { 200: BookingAnswerModel, ...errorResponses(401, 404, 422, 429) },
        detail: { ...limited, summary: "The booking a manage link names (its token in X-Booking-Token)" },
      },
    )
    .post(
      "/manage",
      async ({ headers, body, request, server, set }) => {
        admit(server, request, set, await clinicOfToken(headers["x-booking-token"]));
        asTutor("booking link");
        return booking.manageBooking(services, links, baseUrlOf(request), headers["x-booking-token"], body);
      },
      {
        headers: BookingTokenHeaders,
        body: ManageBookingBody,
        response: { 200: BookingAnswerModel, ...errorResponses(400, 401, 404, 409, 422, 429) },
        detail: {
          ...limited,
          summary: "Cancel or move a booking through its manage link (X-Booking-Token), until the clinic's cancellation window before its start; a move answers a new link",
          "x-statuses": { "409": "INVALID_STATE_TRANSITION (past the cancellation window, or no longer requested or scheduled) or SLOT_TAKEN" },
        },
      },
    );

  return new Elysia({ name: "booking" }).use(clinicsRoutes).use(manageRoutes);
};
