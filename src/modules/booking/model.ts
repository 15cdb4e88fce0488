import { t } from "elysia";
import { SPECIES } from "../../db/schema";
import { Nullable, NullableString, Timestamp, Uuid } from "../../http/common-model";

const Species = t.Union(SPECIES.map((s) => t.Literal(s)));

/** A clinic's public address: lower-case letters, digits and hyphens. */
export const SlugParams = t.Object({ slug: t.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9-]+$", examples: ["los-aromos"] }) });

export const PublicTypeModel = t.Object({
  id: Uuid,
  name: t.String(),
  duration_minutes: t.Integer(),
  species: t.Array(t.String(), { description: "Species it is for; empty = any" }),
  min_notice_minutes: t.Integer(),
  max_advance_days: t.Integer(),
});

export const PublicVetModel = t.Object({ id: Uuid, name: t.String() });

export const ConsentWordingModel = t.Object({
  channel: t.String(),
  text: t.String({ description: "The sentence the booking form shows next to its checkbox; recorded as the consent's evidence" }),
});

export const PublicClinicModel = t.Object({
  name: t.String(),
  address: NullableString(),
  phone: NullableString({ description: "The clinic's phone, when the clinic has set it" }),
  timezone: t.String(),
  slug: t.String(),
  cancellation_window_minutes: t.Integer({ description: "A booking may be cancelled or moved online until this long before its start" }),
  appointment_types: t.Array(PublicTypeModel, { description: "The types the clinic takes online" }),
  vets: Nullable(t.Array(PublicVetModel), { description: "Who can be chosen; null when the clinic does not show its vets online" }),
  consents: t.Array(ConsentWordingModel, { description: "The reminder consents the form asks for, in the clinic's words" }),
});

export const PublicAvailabilityQuery = t.Object({
  appointment_type_id: Uuid,
  from: t.String({ format: "date", description: "First day, inclusive, in the clinic's time zone", examples: ["2026-03-02"] }),
  to: t.String({ format: "date", description: "Last day, inclusive (at most 31 days from `from`)", examples: ["2026-03-08"] }),
  vet_id: t.Optional(Uuid),
});

export const PublicSlotModel = t.Object({ start: Timestamp, end: Timestamp, vet_id: Nullable(Uuid, { description: "Null when the clinic does not show its vets online" }) });
export const PublicAvailabilityModel = t.Object({ data: t.Array(PublicSlotModel), timezone: t.String() });

const Phone = t.String({ pattern: "^\\+[1-9][0-9]{7,14}$", description: "E.164", examples: ["+56912345678"] });

export const CreateBookingBody = t.Object({
  appointment_type_id: Uuid,
  start: t.String({ format: "date-time", description: "A slot's start as availability gives it", examples: ["2026-03-02T13:00:00Z"] }),
  vet_id: t.Optional(Uuid),
  tutor: t.Object({
    name: t.String({ minLength: 1, maxLength: 100 }),
    phone: Phone,
    email: t.String({ format: "email", maxLength: 254 }),
    rut: t.Optional(t.String({ minLength: 1, maxLength: 20, examples: ["12.345.678-5"] })),
  }),
  patient: t.Object({ name: t.String({ minLength: 1, maxLength: 100 }), species: Species }),
  consents: t.Object(
    {
      email_reminders: t.Boolean({ description: "The tutor ticked the e-mail reminders box" }),
      whatsapp_reminders: t.Boolean({ description: "The tutor ticked the WhatsApp reminders box" }),
    },
    { description: "What the tutor ticked; each tick is recorded with the form's wording as evidence" },
  ),
});
export type CreateBookingInput = typeof CreateBookingBody.static;

export const BookingModel = t.Object({
  id: Uuid,
  status: t.String({ description: "requested (the clinic confirms it), scheduled, or cancelled" }),
  start: Timestamp,
  end: Timestamp,
  appointment_type: t.Object({ id: Uuid, name: t.String() }),
  vet: Nullable(PublicVetModel, { description: "Null when the clinic does not show its vets online" }),
  patient_name: t.String(),
  clinic: t.Object({ name: t.String(), slug: t.String(), timezone: t.String() }),
  changeable_until: Timestamp,
  can_change: t.Boolean({ description: "Whether it can still be cancelled or moved online" }),
});

export const BookingAnswerModel = t.Object({
  booking: BookingModel,
  manage_token: t.String({ description: "Signed, expiring token for the manage routes (X-Booking-Token)" }),
  manage_url: t.String({ description: "The page where the tutor sees, cancels or moves the booking; the token rides in the fragment" }),
  manage_expires_at: Timestamp,
});

export const BookingTokenHeaders = t.Object({ "x-booking-token": t.Optional(t.String({ maxLength: 300 })) });

export const ManageBookingBody = t.Object({
  action: t.Union([t.Literal("cancel"), t.Literal("move")]),
  start: t.Optional(t.String({ format: "date-time", description: "The new start (move), a slot availability offers" })),
  vet_id: t.Optional(Uuid),
});
export type ManageBookingInput = typeof ManageBookingBody.static;
