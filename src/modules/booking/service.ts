import { and, asc, eq, inArray, isNull, notInArray, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { appointmentTypes, calendarSettings, clinics, patients, RELEASED_VISIT_STATUSES, tutors, users, visits } from "../../db/schema";
import { hmacSha256, safeEqual } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { normalizeRut } from "../../lib/rut";
import { dayInZone, rfc3339 } from "../../lib/time";
import { assertDayRange, findSlots } from "../availability/service";
import type { Slot } from "../availability/slots";
import { getCalendarSettings, type CalendarSettings } from "../clinic/calendar-settings";
import { recordConsent } from "../consents/service";
import { patientRecords } from "../patients/service";
import { tutorRecords } from "../tutors/service";
import { normalizeEmail } from "../users/service";
import * as visitsService from "../visits/service";
import type { CreateBookingInput, ManageBookingInput } from "./model";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** A clinic that takes bookings online, as its slug names it. */
export interface PublicClinic {
  id: string;
  name: string;
  address: string | null;
  phone: string | null;
  timezone: string;
  slug: string;
  settings: CalendarSettings;
}

type TypeRow = typeof appointmentTypes.$inferSelect;
type VisitRow = typeof visits.$inferSelect;

/**
 * The sentences the booking form shows next to its consent checkboxes (Ley 21.719: specific,
 * informed, prior). The ticked sentence, with the address or number it names, is the consent's
 * evidence, so the record says exactly what the tutor agreed to.
 */
export const CONSENT_WORDING = {
  email: "Acepto que la clínica me envíe recordatorios de mis horas y de las vacunas de mi mascota por correo electrónico. Puedo dejar de recibirlos cuando quiera con el enlace de cada correo.",
  whatsapp: "Acepto que la clínica me envíe recordatorios de mis horas y de las vacunas de mi mascota por WhatsApp a este número. Puedo dejar de recibirlos cuando quiera respondiendo BAJA.",
} as const;

/** The clinic behind a slug, when it takes bookings online (404 otherwise, the same for both). */
export async function clinicBySlug(ctx: Pick<ServiceContext, "db">, slug: string): Promise<PublicClinic> {
  const [row] = await ctx.db
    .select({ id: clinics.id, name: clinics.name, address: clinics.address, phone: clinics.phone, timezone: clinics.timezone, slug: calendarSettings.slug })
    .from(calendarSettings)
    .innerJoin(clinics, eq(clinics.id, calendarSettings.clinic_id))
    .where(eq(calendarSettings.slug, slug.toLowerCase()));
  if (!row?.slug) throw new AppError("NOT_FOUND", "No clinic takes online bookings at this address");
  return { ...row, slug: row.slug, settings: await getCalendarSettings(ctx, row.id) };
}

const bookableTypes = (ctx: Pick<ServiceContext, "db">, clinicId: string) =>
  ctx.db
    .select()
    .from(appointmentTypes)
    .where(and(eq(appointmentTypes.clinic_id, clinicId), isNull(appointmentTypes.deleted_at), eq(appointmentTypes.bookable_online, true)))
    .orderBy(asc(appointmentTypes.name), asc(appointmentTypes.id));

/** A type the clinic takes online; any other (another clinic's, deleted, not bookable) is 404. */
async function bookableType(ctx: Pick<ServiceContext, "db">, clinicId: string, typeId: string, path: string): Promise<TypeRow> {
  const [type] = await ctx.db
    .select()
    .from(appointmentTypes)
    .where(and(eq(appointmentTypes.clinic_id, clinicId), eq(appointmentTypes.id, typeId), isNull(appointmentTypes.deleted_at)));
  if (!type) throw new AppError("NOT_FOUND", "Appointment type not found");
  if (!type.bookable_online) throw AppError.validation([{ path, message: "This appointment type is not booked online; please call the clinic" }], "Not bookable online");
  return type;
}

/** The vets a type may be booked with: its own list, or every vet of the clinic. */
async function eligibleVets(ctx: Pick<ServiceContext, "db">, clinicId: string, type: TypeRow) {
  const conditions = [eq(users.clinic_id, clinicId), isNull(users.deleted_at), type.vet_ids.length ? inArray(users.id, type.vet_ids) : eq(users.role, "vet")];
  return ctx.db.select({ id: users.id, name: users.name }).from(users).where(and(...conditions)).orderBy(users.name, users.id);
}

/** What GET /public/clinics/{slug} shows: the clinic, its bookable types, and its vets when it shows them. */
export async function publicClinic(ctx: ServiceContext, clinic: PublicClinic) {
  const types = await bookableTypes(ctx, clinic.id);
  let vets: { id: string; name: string }[] | null = null;
  if (clinic.settings.show_vet_names_online) {
    const seen = new Map<string, { id: string; name: string }>();
    for (const type of types) for (const vet of await eligibleVets(ctx, clinic.id, type)) seen.set(vet.id, vet);
    vets = [...seen.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
  return {
    name: clinic.name,
    address: clinic.address,
    phone: clinic.phone,
    timezone: clinic.timezone,
    slug: clinic.slug,
    cancellation_window_minutes: clinic.settings.cancellation_window_minutes,
    appointment_types: types.map((type) => ({ id: type.id, name: type.name, duration_minutes: type.duration_minutes, species: type.species, min_notice_minutes: type.min_notice_minutes, max_advance_days: type.max_advance_days })),
    vets,
    consents: [
      { channel: "email", text: CONSENT_WORDING.email },
      { channel: "whatsapp", text: CONSENT_WORDING.whatsapp },
    ],
  };
}

/** A vet may be chosen online only where the clinic shows its vets. */
function assertVetChoice(clinic: PublicClinic, vetId: string | undefined, path: string) {
  if (vetId !== undefined && !clinic.settings.show_vet_names_online) throw AppError.validation([{ path, message: "This clinic does not offer choosing a vet online" }]);
}

/**
 * Free slots for a bookable type: the staff computation, the type's notice and advance included.
 * Without vet names online, one slot per start (whichever vet is free takes the booking).
 */
export async function publicAvailability(ctx: ServiceContext, clinic: PublicClinic, query: { appointment_type_id: string; from: string; to: string; vet_id?: string }) {
  assertVetChoice(clinic, query.vet_id, "query.vet_id");
  const type = await bookableType(ctx, clinic.id, query.appointment_type_id, "query.appointment_type_id");
  assertDayRange(query.from, query.to);
  const { slots, timezone } = await findSlots(ctx, clinic.id, type, { from: query.from, to: query.to, ...(query.vet_id ? { vetId: query.vet_id } : {}) });
  const shown = clinic.settings.show_vet_names_online;
  const data: { start: string; end: string; vet_id: string | null }[] = [];
  let lastStart = -1;
  for (const slot of slots) {
    if (!shown && slot.start === lastStart) continue;
    lastStart = slot.start;
    data.push({ start: rfc3339(new Date(slot.start)), end: rfc3339(new Date(slot.end)), vet_id: shown ? slot.vet_id : null });
  }
  return { data, timezone };
}

/**
 * The slot a booking (or a move) takes: one the availability computation offers at exactly that
 * start, for the asked vet or any eligible one. A start it does not offer is refused for its
 * reason: before the minimum notice or past the maximum advance (422), held by a live visit
 * (409 SLOT_TAKEN, as staff get it), or outside every working hour (422).
 */
async function slotAt(ctx: ServiceContext, clinic: PublicClinic, type: TypeRow, start: Date, vetId: string | undefined, ignoreVisitId?: string): Promise<Slot> {
  const now = ctx.clock.now().getTime();
  if (start.getTime() < now + type.min_notice_minutes * MINUTE) {
    throw AppError.validation([{ path: "body.start", message: `Bookings for this type are taken at least ${type.min_notice_minutes} minutes ahead` }], "Too soon");
  }
  if (start.getTime() > now + type.max_advance_days * DAY) {
    throw AppError.validation([{ path: "body.start", message: `Bookings for this type are taken at most ${type.max_advance_days} days ahead` }], "Too far ahead");
  }
  const day = dayInZone(start, clinic.timezone);
  const { slots } = await findSlots(ctx, clinic.id, type, { from: day, to: day, ...(vetId ? { vetId } : {}), ...(ignoreVisitId ? { ignoreVisitId } : {}) });
  const found = slots.find((slot) => slot.start === start.getTime());
  if (found) return found;
  const vetIds = vetId ? [vetId] : (await eligibleVets(ctx, clinic.id, type)).map((v) => v.id);
  const holdStart = new Date(start.getTime() - type.buffer_before_minutes * MINUTE);
  const holdEnd = new Date(start.getTime() + (type.duration_minutes + type.buffer_after_minutes) * MINUTE);
  const [held] = vetIds.length
    ? await ctx.db
        .select({ vet_id: visits.vet_id })
        .from(visits)
        .where(
          and(
            eq(visits.clinic_id, clinic.id),
            isNull(visits.deleted_at),
            notInArray(visits.status, [...RELEASED_VISIT_STATUSES]),
            inArray(visits.vet_id, vetIds),
            ignoreVisitId ? sql`${visits.id} <> ${ignoreVisitId}` : undefined,
            sql`visit_hold(${visits.scheduled_at}, ${visits.ends_at}, ${visits.buffer_before_minutes}, ${visits.buffer_after_minutes}) && tstzrange(${holdStart.toISOString()}::timestamptz, ${holdEnd.toISOString()}::timestamptz)`,
          ),
        )
        .limit(1)
    : [];
  if (held) {
    throw await visitsService.slotTaken(ctx, clinic.id, {
      scheduled_at: start,
      ends_at: new Date(start.getTime() + type.duration_minutes * MINUTE),
      vet_id: held.vet_id,
      room_id: null,
      appointment_type_id: type.id,
      buffer_before_minutes: type.buffer_before_minutes,
      buffer_after_minutes: type.buffer_after_minutes,
    }, ignoreVisitId);
  }
  throw AppError.validation([{ path: "body.start", message: "No free slot starts at this time; pick one from the availability" }], "Not an offered slot");
}

const digitsOf = (phone: string) => phone.replace(/[^0-9]/g, "");

/**
 * The tutor the form names: an existing live tutor of the clinic with the same phone (digits
 * compared) or else the same e-mail (case and spaces ignored), the oldest first; otherwise a new
 * one from the form. Never a placeholder, and the caller's answer does not depend on which.
 */
async function matchOrCreateTutor(ctx: ServiceContext, clinicId: string, input: CreateBookingInput["tutor"], rut: string | null) {
  const email = normalizeEmail(input.email);
  const live = and(eq(tutors.clinic_id, clinicId), isNull(tutors.deleted_at), isNull(tutors.blocked_at));
  const [byPhone] = await ctx.db.select().from(tutors).where(and(live, sql`regexp_replace(coalesce(${tutors.phone}, ''), '[^0-9]', '', 'g') = ${digitsOf(input.phone)}`)).orderBy(tutors.created_at, tutors.id).limit(1);
  const [byEmail] = byPhone ? [] : await ctx.db.select().from(tutors).where(and(live, sql`lower(trim(coalesce(${tutors.email}, ''))) = ${email}`)).orderBy(tutors.created_at, tutors.id).limit(1);
  const matched = byPhone ?? byEmail;
  if (matched) return { tutor: matched, matched: true };
  const tutor = await tutorRecords.insert(ctx, clinicId, { name: input.name.trim(), phone: input.phone, email, national_id: rut });
  return { tutor: tutor as typeof tutors.$inferSelect, matched: false };
}

/** The tutor's live patient of that name (accents and case ignored) and species, or a new one. */
async function matchOrCreatePatient(ctx: ServiceContext, clinicId: string, tutorId: string, input: CreateBookingInput["patient"]) {
  const [existing] = await ctx.db
    .select({ id: patients.id })
    .from(patients)
    .where(and(eq(patients.clinic_id, clinicId), eq(patients.tutor_id, tutorId), isNull(patients.deleted_at), isNull(patients.deceased_on), eq(patients.species, input.species), sql`fold_name(${patients.name}) = fold_name(${input.name.trim()})`))
    .orderBy(patients.created_at, patients.id)
    .limit(1);
  if (existing) return existing.id;
  const created = (await patientRecords.insert(ctx, clinicId, { tutor_id: tutorId, name: input.name.trim(), species: input.species })) as { id: string };
  return created.id;
}

/** Signed, expiring manage tokens: `<visit id>.<expiry, epoch seconds>.<HMAC>`, keyed from the JWT secret. */
export class ManageLinks {
  private readonly key: string;

  constructor(jwtSecret: string) {
    this.key = hmacSha256(jwtSecret, "booking-manage-links");
  }

  /** A token for the visit, valid until a day after its start (the day of the visit included). */
  issue(visitId: string, start: Date): { token: string; expiresAt: Date } {
    const expires = Math.floor((start.getTime() + DAY) / 1000);
    return { token: `${visitId}.${expires}.${hmacSha256(this.key, `${visitId}.${expires}`)}`, expiresAt: new Date(expires * 1000) };
  }

  /** The visit a token names; 401 when it is not one of ours or has expired. */
  verify(token: string | undefined, now: Date): string {
    const [visitId, expires, mac, ...rest] = (token ?? "").split(".");
    const shaped = !rest.length && visitId && /^[0-9a-f-]{36}$/.test(visitId) && expires && /^[0-9]{1,12}$/.test(expires) && mac;
    if (!shaped || !safeEqual(mac, hmacSha256(this.key, `${visitId}.${expires}`))) throw new AppError("INVALID_TOKEN", "This booking link is not valid");
    if (Number(expires) * 1000 <= now.getTime()) throw new AppError("TOKEN_EXPIRED", "This booking link has expired; please call the clinic");
    return visitId;
  }
}

/** Until when a booking may be cancelled or moved online. */
const changeableUntil = (clinic: PublicClinic, start: Date) => new Date(start.getTime() - clinic.settings.cancellation_window_minutes * MINUTE);

/** A booking as the tutor sees it: nothing of the tutor's record, so a match is not revealed. */
async function bookingView(ctx: ServiceContext, clinic: PublicClinic, visit: VisitRow, patientName: string) {
  const [type] = visit.appointment_type_id ? await ctx.db.select({ id: appointmentTypes.id, name: appointmentTypes.name }).from(appointmentTypes).where(eq(appointmentTypes.id, visit.appointment_type_id)) : [];
  const [vet] = clinic.settings.show_vet_names_online && visit.vet_id ? await ctx.db.select({ id: users.id, name: users.name }).from(users).where(eq(users.id, visit.vet_id)) : [];
  const until = changeableUntil(clinic, visit.scheduled_at);
  return {
    id: visit.id,
    status: visit.status,
    start: rfc3339(visit.scheduled_at),
    end: rfc3339(visit.ends_at),
    appointment_type: { id: type?.id ?? visit.appointment_type_id ?? "", name: type?.name ?? "" },
    vet: vet ?? null,
    patient_name: patientName,
    clinic: { name: clinic.name, slug: clinic.slug, timezone: clinic.timezone },
    changeable_until: rfc3339(until),
    can_change: (visit.status === "requested" || visit.status === "scheduled") && ctx.clock.now().getTime() <= until.getTime(),
  };
}

/** The answer of a booking or a move: the booking and a fresh manage link. */
async function withLink(ctx: ServiceContext, clinic: PublicClinic, links: ManageLinks, baseUrl: string, visit: VisitRow, patientName: string) {
  const { token, expiresAt } = links.issue(visit.id, visit.scheduled_at);
  return {
    booking: await bookingView(ctx, clinic, visit, patientName),
    manage_token: token,
    manage_url: `${baseUrl}/book/${clinic.slug}/manage#${token}`,
    manage_expires_at: rfc3339(expiresAt),
  };
}

/**
 * A tutor's booking, in the caller's transaction (with the Idempotency-Key's claim): the type
 * must take it (bookable online, the species, notice, advance, an offered slot), then the tutor
 * (matched or new), the patient (the tutor's own of that name and species, or new), the visit
 * (`requested`, or `scheduled` when the clinic confirms online bookings itself) and the ticked
 * consents. A refusal at any step rolls all of it back.
 */
export async function book(ctx: ServiceContext, clinic: PublicClinic, input: CreateBookingInput, links: ManageLinks, baseUrl: string) {
  assertVetChoice(clinic, input.vet_id, "body.vet_id");
  const type = await bookableType(ctx, clinic.id, input.appointment_type_id, "body.appointment_type_id");
  if (type.species.length && !type.species.includes(input.patient.species)) {
    throw AppError.validation([{ path: "body.patient.species", message: `This appointment type is for ${type.species.join(", ")}` }], "Species not taken");
  }
  const rut = input.tutor.rut === undefined ? null : normalizeRut(input.tutor.rut);
  if (input.tutor.rut !== undefined && !rut) throw AppError.validation([{ path: "body.tutor.rut", message: "Not a valid RUT" }]);
  const start = new Date(input.start);
  const slot = await slotAt(ctx, clinic, type, start, input.vet_id);

  const { tutor, matched } = await matchOrCreateTutor(ctx, clinic.id, input.tutor, rut);
  const patientId = await matchOrCreatePatient(ctx, clinic.id, tutor.id, input.patient);
  const status = clinic.settings.auto_confirm_online_bookings ? "scheduled" : "requested";
  const created = await visitsService.create(ctx, clinic.id, { patient_id: patientId, vet_id: slot.vet_id, scheduled_at: input.start, appointment_type_id: type.id, room_id: slot.room_id, reason: `Reserva en línea: ${type.name}` }, status);

  // A tick binds the contact the form gave. On a matched tutor it is recorded only where that
  // contact is the one on file: an anonymous form must not grant messages to someone else's
  // address, nor change what a known tutor decided.
  const given = { email: normalizeEmail(input.tutor.email), whatsapp: digitsOf(input.tutor.phone) };
  const onFile = { email: tutor.email ? normalizeEmail(tutor.email) : null, whatsapp: tutor.phone ? digitsOf(tutor.phone) : null };
  const ticks = [
    ["email", input.consents.email_reminders, input.tutor.email],
    ["whatsapp", input.consents.whatsapp_reminders, input.tutor.phone],
  ] as const;
  for (const [channel, ticked, contact] of ticks) {
    if (!ticked || (matched && onFile[channel] !== given[channel])) continue;
    await recordConsent(ctx, clinic.id, tutor.id, {
      channel,
      purpose: "reminders",
      granted: true,
      source: "booking",
      evidence: `Formulario de reserva en línea (/book/${clinic.slug}), casilla marcada para ${contact}: «${CONSENT_WORDING[channel]}»`,
      recordedBy: null,
    });
  }
  const visit = await visitsService.visitRecords.find(ctx, clinic.id, created.id);
  return withLink(ctx, clinic, links, baseUrl, visit, input.patient.name.trim());
}

/** The booking a manage token names, with its clinic (404 once the visit is gone). */
export async function bookingOfToken(ctx: ServiceContext, links: ManageLinks, token: string | undefined) {
  const visitId = links.verify(token, ctx.clock.now());
  const [visit] = await ctx.db.select().from(visits).where(and(eq(visits.id, visitId), isNull(visits.deleted_at)));
  if (!visit) throw new AppError("NOT_FOUND", "This booking no longer exists; please call the clinic");
  const [settings] = await ctx.db.select({ slug: calendarSettings.slug }).from(calendarSettings).where(eq(calendarSettings.clinic_id, visit.clinic_id));
  const [clinic] = await ctx.db.select({ id: clinics.id, name: clinics.name, address: clinics.address, phone: clinics.phone, timezone: clinics.timezone }).from(clinics).where(eq(clinics.id, visit.clinic_id));
  const [patient] = await ctx.db.select({ name: patients.name }).from(patients).where(eq(patients.id, visit.patient_id));
  const publicClinic: PublicClinic = { ...clinic!, slug: settings?.slug ?? "", settings: await getCalendarSettings(ctx, visit.clinic_id) };
  return { visit, clinic: publicClinic, patientName: patient?.name ?? "" };
}

/** The booking a link names (the link's token is the same while the booking keeps its start). */
export async function viewBooking(ctx: ServiceContext, links: ManageLinks, baseUrl: string, token: string | undefined) {
  const { visit, clinic, patientName } = await bookingOfToken(ctx, links, token);
  return withLink(ctx, clinic, links, baseUrl, visit, patientName);
}

/**
 * Cancels or moves a booking through its link, until the clinic's cancellation window before its
 * start; a move takes a slot availability offers for the same type (the booking's own time is
 * free to it) and keeps the visit's status. Both go through the visits' own update, so they
 * bump its revision and join the audit trail.
 */
export async function manageBooking(ctx: ServiceContext, links: ManageLinks, baseUrl: string, token: string | undefined, input: ManageBookingInput) {
  const { visit, clinic, patientName } = await bookingOfToken(ctx, links, token);
  if (input.action === "cancel" && visit.status === "cancelled") return withLink(ctx, clinic, links, baseUrl, visit, patientName);
  if (visit.status !== "requested" && visit.status !== "scheduled") throw new AppError("INVALID_STATE_TRANSITION", `A ${visit.status} booking cannot be changed online`);
  const minutes = clinic.settings.cancellation_window_minutes;
  if (ctx.clock.now().getTime() > changeableUntil(clinic, visit.scheduled_at).getTime()) {
    throw new AppError("INVALID_STATE_TRANSITION", `Bookings can be changed online until ${minutes} minutes before their start; please call the clinic`, { window_minutes: minutes });
  }
  if (input.action === "cancel") {
    if (input.start !== undefined || input.vet_id !== undefined) throw AppError.validation([{ path: "body.start", message: "Only a move takes a start or a vet" }]);
    await visitsService.update(ctx, clinic.id, visit.id, { status: "cancelled" });
  } else {
    if (input.start === undefined) throw AppError.validation([{ path: "body.start", message: "A move needs the new start" }]);
    assertVetChoice(clinic, input.vet_id, "body.vet_id");
    if (!visit.appointment_type_id) throw new AppError("INVALID_STATE_TRANSITION", "This visit cannot be moved online; please call the clinic");
    const type = await bookableType(ctx, clinic.id, visit.appointment_type_id, "body.start");
    const start = new Date(input.start);
    // The same vet when it is free then (or the one asked for), else any vet of the type.
    const slot = await slotAt(ctx, clinic, type, start, input.vet_id ?? visit.vet_id ?? undefined, visit.id).catch(async (error: unknown) => {
      const vetNotFree = error instanceof AppError && (error.code === "SLOT_TAKEN" || error.message === "Not an offered slot");
      if (input.vet_id || !vetNotFree) throw error;
      return slotAt(ctx, clinic, type, start, undefined, visit.id);
    });
    await visitsService.update(ctx, clinic.id, visit.id, { scheduled_at: input.start, vet_id: slot.vet_id, room_id: slot.room_id });
  }
  const after = await visitsService.visitRecords.find(ctx, clinic.id, visit.id);
  return withLink(ctx, clinic, links, baseUrl, after, patientName);
}
