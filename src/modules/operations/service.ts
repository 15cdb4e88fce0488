import { and, eq, isNull, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { liveIn } from "../../db/clinic-records";
import { afterKeyset, ascending, keyset, type Page, type PageRequest } from "../../db/keyset";
import { clinicalNotes, patients, tutors, visits } from "../../db/schema";
import type { VisitFilters } from "../visits/model";
import { visitConditions, view as visitView } from "../visits/service";

/** The board's order: by scheduled time, then id (its keyset follows the query below). */
const BOARD_ORDER = [visits.scheduled_at, visits.id];

/** The day board: visits in scheduled order with who the patient and tutor are, in one query. */
export async function boardPage(ctx: ServiceContext, clinicId: string, timeZone: string, filters: VisitFilters, page: CursorRequest): Promise<Page<BoardRow>> {
  return { rows: await boardRows(ctx, clinicId, timeZone, filters, page), total: null };
}

/** The board has the cursor form only (its query declares no offset). */
type CursorRequest = Extract<PageRequest, { kind: "cursor" }>;

function boardRows(ctx: ServiceContext, clinicId: string, timeZone: string, filters: VisitFilters, page: CursorRequest) {
  return ctx.db
    .select({
      visit: visits,
      patient: { id: patients.id, name: patients.name, species: patients.species },
      tutor: { id: tutors.id, name: tutors.name, phone: tutors.phone },
      // A completed visit whose record is not final yet: no signed note (a draft does not count).
      // OFFSET 0 keeps it a look-up of the visit's notes: hashed, it would read every clinic's notes.
      needsSignedNote: sql<boolean>`(${visits.status} = 'completed' and not exists (select 1 from ${clinicalNotes} where ${clinicalNotes.clinic_id} = ${visits.clinic_id} and ${clinicalNotes.visit_id} = ${visits.id} and ${clinicalNotes.signed_at} is not null and ${clinicalNotes.deleted_at} is null offset 0))`,
    })
    .from(visits)
    // A deleted patient or tutor never shows in the board's summaries (null instead).
    .leftJoin(patients, and(eq(patients.id, visits.patient_id), eq(patients.clinic_id, clinicId), isNull(patients.deleted_at)))
    .leftJoin(tutors, and(eq(tutors.id, patients.tutor_id), eq(tutors.clinic_id, clinicId), isNull(tutors.deleted_at)))
    .where(and(liveIn(visits, clinicId), ...visitConditions(filters, timeZone), afterKeyset(BOARD_ORDER, page.after)))
    .orderBy(...ascending(BOARD_ORDER))
    .limit(page.limit + 1);
}

export type BoardRow = Awaited<ReturnType<typeof boardRows>>[number];
export const BOARD_KEYSET = keyset<BoardRow>("operations_visits", BOARD_ORDER, (row) => [row.visit.scheduled_at, row.visit.id]);

/** A board row as the API shows it. */
export const boardView = (row: BoardRow) => ({ ...visitView(row.visit), patient: row.patient, tutor: row.tutor, needs_signed_note: Boolean(row.needsSignedNote) });
