import { and, arrayOverlaps, asc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, not, or, sql } from "drizzle-orm";
import type { Db, ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, liveIn, recordView } from "../../db/clinic-records";
import { afterKeyset, keyset, type Page, type PageRequest } from "../../db/keyset";
import { patients, tutors, vaccinations, type ReminderStatus } from "../../db/schema";
import type { ListActor } from "../../http/clinic-resource";
import { MINUTE } from "../../lib/clock";
import { AppError } from "../../lib/errors";
import { addDays, dayInZone } from "../../lib/time";
import type { ClinicalActor } from "../notes/service";
import { patientRecords, recordsOfPatient } from "../patients/service";
import { userRecords } from "../users/service";
import { visitRecords } from "../visits/service";
import type { CreateVaccinationInput, DueFilters } from "./model";

export const vaccinationRecords = clinicRecords(vaccinations, "Vaccination");
type VaccinationRow = typeof vaccinations.$inferSelect;

export const view = (row: VaccinationRow) => recordView(row);

const FUTURE_SKEW_MS = 5 * MINUTE;
/** The due list's window when `to` is left out. */
export const DUE_WINDOW_DAYS = 30;

/**
 * Due dates this dose supersedes: open ones of the same patient, from an earlier dose (or a due
 * date alone) that protects against one of the same diseases; a due date alone carried over from
 * an alert names no disease, so its vaccine name (any case) is what matches.
 */
const supersededBy = (dose: { patient_id: string; diseases: string[]; vaccine: string; given_at: Date; id: string }) =>
  and(
    eq(vaccinations.patient_id, dose.patient_id),
    ne(vaccinations.id, dose.id),
    isNull(vaccinations.due_closed_at),
    isNotNull(vaccinations.next_due_on),
    sql`coalesce(${vaccinations.given_at}, ${vaccinations.created_at}) <= ${dose.given_at.toISOString()}::timestamptz`,
    or(
      arrayOverlaps(vaccinations.diseases, dose.diseases),
      and(sql`cardinality(${vaccinations.diseases}) = 0`, sql`lower(${vaccinations.vaccine}) = lower(${dose.vaccine})`),
    ),
  );

/**
 * Records a dose. A lot that expired before the day of the dose is refused; the next due date
 * must come after it. A later dose for the same disease closes the earlier due dates; a dose
 * recorded late (older than one already on file for the same disease) starts closed itself.
 */
export async function create(ctx: ServiceContext, actor: ClinicalActor & { timezone: string }, patientId: string, input: CreateVaccinationInput) {
  await patientRecords.find(ctx, actor.clinicId, patientId);
  const now = ctx.clock.now();
  const givenAt = input.given_at ? new Date(input.given_at) : now;
  const fields = [];
  if (givenAt.getTime() > now.getTime() + FUTURE_SKEW_MS) fields.push({ path: "body.given_at", message: "Must not be in the future" });
  const givenOn = dayInZone(givenAt, actor.timezone);
  if (input.lot_expires_on && input.lot_expires_on < givenOn) {
    fields.push({ path: "body.lot_expires_on", message: `The lot expired on ${input.lot_expires_on}, before the dose (${givenOn}); a vaccine from an expired lot is not given` });
  }
  if (input.next_due_on && input.next_due_on <= givenOn) fields.push({ path: "body.next_due_on", message: `Must come after the day of the dose (${givenOn})` });
  if (fields.length) throw AppError.validation(fields);
  await assertReferenced(ctx, actor.clinicId, [
    { field: "given_by", id: input.given_by, records: userRecords, what: "user" },
    { field: "visit_id", id: input.visit_id, records: visitRecords, what: "visit" },
  ]);
  return ctx.db.transaction(async (tx) => {
    const scoped = { db: tx, clock: ctx.clock };
    let row = await vaccinationRecords.insert(scoped, actor.clinicId, {
      ...input,
      patient_id: patientId,
      given_at: givenAt,
      given_by: input.given_by === undefined ? actor.userId : input.given_by,
    });
    const dose = { ...row, given_at: givenAt, diseases: row.diseases };
    await tx
      .update(vaccinations)
      .set({ due_closed_at: now, due_closed_by: row.id, updated_at: now })
      .where(and(liveIn(vaccinations, actor.clinicId), supersededBy(dose)));
    if (row.next_due_on) {
      const [later] = await tx
        .select({ id: vaccinations.id })
        .from(vaccinations)
        .where(and(liveIn(vaccinations, actor.clinicId), eq(vaccinations.patient_id, patientId), ne(vaccinations.id, row.id), gt(vaccinations.given_at, givenAt), arrayOverlaps(vaccinations.diseases, row.diseases)))
        .orderBy(asc(vaccinations.given_at))
        .limit(1);
      if (later) [row] = await tx.update(vaccinations).set({ due_closed_at: now, due_closed_by: later.id }).where(eq(vaccinations.id, row.id)).returning() as [VaccinationRow];
    }
    return view(row);
  });
}

/** A patient's vaccinations, and delta sync of them (deleted ones included). */
export const ofPatient = recordsOfPatient(vaccinationRecords, vaccinations.patient_id);

/** Reception's call on a due date: pending, contacted, booked or declined. A closed due date is history (409). */
export async function setReminder(ctx: ServiceContext, clinicId: string, id: string, status: ReminderStatus) {
  const current = await vaccinationRecords.find(ctx, clinicId, id);
  if (!current.next_due_on || current.due_closed_at) {
    throw new AppError("CONFLICT", current.next_due_on ? "A later dose already closed this due date" : "This vaccination has no next due date", { id });
  }
  const now = ctx.clock.now();
  return view(await vaccinationRecords.update(ctx, clinicId, id, { reminder_status: status, reminder_updated_at: now }));
}

/** The due list's order: by due date, then id. */
const DUE_ORDER = [vaccinations.next_due_on, vaccinations.id];

type CursorRequest = Extract<PageRequest, { kind: "cursor" }>;

/**
 * The due list: open due dates from `from` (today in the clinic's time zone) through `to`, and
 * every earlier one still open (overdue), of live patients, with the tutor to call.
 */
export async function duePage(ctx: ServiceContext, actor: ListActor, filters: DueFilters, page: CursorRequest) {
  const today = dayInZone(ctx.clock.now(), actor.timezone);
  const from = filters.from ?? today;
  const to = filters.to ?? addDays(from, DUE_WINDOW_DAYS);
  if (to < from) throw AppError.validation([{ path: "query.to", message: "Must not be before from" }]);
  const db = ctx.db as Db;
  // Each due date's live patient and its tutor, looked up by id for that row (the LIMIT keeps the
  // look-up a look-up): the due-date index drives the page, in its order, and stops after it,
  // instead of the planner joining every patient of the clinic first.
  const who = db
    .select({
      patient_id: sql<string>`${patients.id}`.as("due_patient_id"),
      patient_name: sql<string>`${patients.name}`.as("due_patient_name"),
      species: sql<string>`${patients.species}`.as("due_species"),
      tutor_id: sql<string>`${tutors.id}`.as("due_tutor_id"),
      tutor_name: sql<string>`${tutors.name}`.as("due_tutor_name"),
      phone: sql<string | null>`${tutors.phone}`.as("due_phone"),
    })
    .from(patients)
    .innerJoin(tutors, and(eq(tutors.id, patients.tutor_id), eq(tutors.clinic_id, actor.clinicId)))
    .where(and(eq(patients.id, vaccinations.patient_id), eq(patients.clinic_id, actor.clinicId), isNull(patients.deleted_at)))
    .limit(1)
    .as("who");
  const found = await db
    .select({
      vaccination: vaccinations,
      patient: { id: who.patient_id, name: who.patient_name, species: who.species },
      tutor: { id: who.tutor_id, name: who.tutor_name, phone: who.phone },
    })
    .from(vaccinations)
    .innerJoinLateral(who, sql`true`)
    .where(
      and(
        liveIn(vaccinations, actor.clinicId),
        isNull(vaccinations.due_closed_at),
        isNotNull(vaccinations.next_due_on),
        // The overdue ones and those from `from` through `to`, as one range of the due-date index read
        // in its order (so a page stops after a page): every open due date up to `to` (up to yesterday
        // when `to` is past), less the days from today until `from` when `from` is later.
        lte(vaccinations.next_due_on, to >= today ? to : addDays(today, -1)),
        from > today ? not(and(gte(vaccinations.next_due_on, today), lt(vaccinations.next_due_on, from))!) : undefined,
        filters.reminder_status ? inArray(vaccinations.reminder_status, filters.reminder_status.split(",") as ReminderStatus[]) : undefined,
        afterKeyset(DUE_ORDER, page.after),
      ),
    )
    .orderBy(...DUE_ORDER.map((c) => asc(c)))
    .limit(page.limit + 1);
  return { rows: found.map((row) => ({ ...row, today })), total: null } satisfies Page<DueRow>;
}

type DueRow = {
  vaccination: VaccinationRow;
  patient: { id: string; name: string; species: string };
  tutor: { id: string; name: string; phone: string | null };
  today: string;
};
export const DUE_KEYSET = keyset<DueRow>("vaccinations_due", DUE_ORDER, (row) => [row.vaccination.next_due_on!, row.vaccination.id]);

export const dueView = ({ vaccination: v, patient, tutor, today }: DueRow) => ({
  id: v.id,
  due_on: v.next_due_on!,
  overdue: v.next_due_on! < today,
  vaccine: v.vaccine,
  diseases: v.diseases,
  given_at: v.given_at?.toISOString() ?? null,
  reminder_status: v.reminder_status,
  reminder_updated_at: v.reminder_updated_at?.toISOString() ?? null,
  patient,
  tutor,
});
