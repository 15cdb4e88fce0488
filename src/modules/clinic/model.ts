import { t } from "elysia";
import { Currency, Nullable, NullableString, OptionalNullable, PhoneNumber, StrictInteger, Timestamp, Uuid } from "../../http/common-model";

/** The languages of the clinic's messages to tutors (reminders, the tutor's pages) and of its console. */
export const ClinicLanguage = t.Union([t.Literal("es"), t.Literal("en")], { description: "es (Spanish) or en (English): the language of reminders and pages sent to tutors" });

export const ClinicModel = t.Object({
  id: Uuid,
  name: t.String(),
  legal_name: Nullable(t.String(), { description: "Razón social (SII issuer)" }),
  rut: Nullable(t.String(), { description: "The clinic's RUT, 12.345.678-5" }),
  address: NullableString(),
  phone: NullableString({ description: "The phone tutors call, shown on the online booking page" }),
  giro: Nullable(t.String(), { description: "Business activity (SII issuer)" }),
  economic_activity_code: Nullable(t.String(), { description: "Acteco: the SII's economic activity code (up to 6 digits)" }),
  commune: Nullable(t.String(), { description: "Comuna of the issuer's address" }),
  sii_resolution_number: Nullable(t.Integer(), { description: "Número de resolución authorizing the clinic to issue DTEs (0 while certifying)" }),
  sii_resolution_date: Nullable(t.String({ format: "date" }), { description: "Fecha de resolución (YYYY-MM-DD)" }),
  timezone: t.String(),
  currency: t.String(),
  language: ClinicLanguage,
  tax_rate_bps: t.Integer(),
  plan: t.String(),
  burst_per_minute: Nullable(t.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export type ClinicView = typeof ClinicModel.static;

/** What the owner may change; `plan` is read-only (it decides the MCP burst cap). */
export const UpdateClinicBody = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    legal_name: OptionalNullable(t.String({ minLength: 1, maxLength: 200, examples: ["Servicios Veterinarios Los Aromos SpA"] })),
    rut: OptionalNullable(t.String({ minLength: 3, maxLength: 14, examples: ["76.086.428-5"], description: "Módulo-11 verified; stored as 12.345.678-5" })),
    address: OptionalNullable(t.String({ minLength: 1, maxLength: 300, examples: ["Av. Los Aromos 1234, Ñuñoa, Santiago"] })),
    phone: OptionalNullable(PhoneNumber),
    giro: OptionalNullable(t.String({ minLength: 1, maxLength: 200, examples: ["Servicios veterinarios"] })),
    economic_activity_code: OptionalNullable(t.String({ pattern: "^[0-9]{1,6}$", examples: ["750000"], description: "Acteco (up to 6 digits)" })),
    commune: OptionalNullable(t.String({ minLength: 1, maxLength: 20, examples: ["Ñuñoa"], description: "Comuna (the SII's schema holds 20 characters)" })),
    sii_resolution_number: OptionalNullable(StrictInteger({ minimum: 0, maximum: 999_999, description: "0 while certifying" })),
    sii_resolution_date: OptionalNullable(t.String({ format: "date", examples: ["2026-01-15"] })),
    timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, examples: ["America/Santiago"], description: "An IANA time zone" })),
    tax_rate_bps: t.Optional(StrictInteger({ minimum: 0, maximum: 10_000, description: "Tax in basis points (1900 = 19 %)" })),
    currency: t.Optional(Currency),
    language: t.Optional(ClinicLanguage),
  },
  { minProperties: 1 },
);

export type UpdateClinicInput = typeof UpdateClinicBody.static;
