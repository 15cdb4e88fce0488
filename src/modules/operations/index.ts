import { and, eq, isNull } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import type { ServiceContext } from "../../db/client";
import { liveIn } from "../../db/clinic-records";
import { afterKeyset, ascending, keyset, type Page, type PageRequest } from "../../db/keyset";
import { patients, tutors, visits } from "../../db/schema";
import { errorResponses, NullableString, Uuid } from "../../http/common-model";
import { cursorQueryFields, CursorPage } from "../../http/pagination";
import { VisitFilterFields, VisitModel, type VisitFilters } from "../visits/model";
import { visitConditions, visitView } from "../visits/service";

/** The board's order: by scheduled time, then id (its keyset follows the query below). */
const BOARD_ORDER = [visits.scheduled_at, visits.id];

const BoardVisit = t.Composite([
  VisitModel,
  t.Object({
    patient: t.Union([t.Object({ id: Uuid, name: t.String(), species: t.String() }), t.Null()]),
    tutor: t.Union([t.Object({ id: Uuid, name: t.String(), phone: NullableString() }), t.Null()]),
  }),
]);

/** The day board: visits in scheduled order with who the patient and tutor are, in one query. */
export async function boardPage(ctx: ServiceContext, clinicId: string, timeZone: string, filters: VisitFilters, page: PageRequest): Promise<Page<BoardRow>> {
  return { rows: await boardRows(ctx, clinicId, timeZone, filters, page.kind === "cursor" ? page : { kind: "cursor", limit: page.limit, after: null }), total: null };
}

function boardRows(ctx: ServiceContext, clinicId: string, timeZone: string, filters: VisitFilters, page: PageRequest & { kind: "cursor" }) {
  return ctx.db
    .select({
      visit: visits,
      patient: { id: patients.id, name: patients.name, species: patients.species },
      tutor: { id: tutors.id, name: tutors.name, phone: tutors.phone },
    })
    .from(visits)
    // A deleted patient or tutor never shows in the board's summaries (null instead).
    .leftJoin(patients, and(eq(patients.id, visits.patient_id), eq(patients.clinic_id, clinicId), isNull(patients.deleted_at)))
    .leftJoin(tutors, and(eq(tutors.id, patients.tutor_id), eq(tutors.clinic_id, clinicId), isNull(tutors.deleted_at)))
    .where(and(liveIn(visits, clinicId), ...visitConditions(filters, timeZone), afterKeyset(BOARD_ORDER, page.after)))
    .orderBy(...ascending(BOARD_ORDER))
    .limit(page.limit + 1);
}

type BoardRow = Awaited<ReturnType<typeof boardRows>>[number];
export const BOARD_KEYSET = keyset<BoardRow>("operations_visits", BOARD_ORDER, (row) => [row.visit.scheduled_at, row.visit.id]);

export const operationsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/operations", tags: ["operations"] as never })
    .use(auth)
    .get(
      "/visits",
      async ({ actor, query }) => {
        const page = paginator.request(query, BOARD_KEYSET);
        const result = await boardPage(services, actor.clinicId, actor.clinic.timezone, query, page);
        return paginator.respond(page, result, BOARD_KEYSET, (r) => ({ ...visitView(r.visit), patient: r.patient, tutor: r.tutor }));
      },
      {
        auth: true,
        query: t.Object({ ...cursorQueryFields, ...VisitFilterFields }),
        response: { 200: CursorPage(BoardVisit), ...errorResponses(400, 401, 422) },
        detail: { summary: "The operations board: visits by scheduled time with patient and tutor summaries" },
      },
    );
