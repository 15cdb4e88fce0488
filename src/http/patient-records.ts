import { Elysia, type TSchema } from "elysia";
import type { AppContext } from "../context";
import type { ServiceContext } from "../db/client";
import type { Keyset, Page, PageRequest } from "../db/keyset";
import type { Role } from "../db/schema";
import { errorResponses, IdParams } from "./common-model";
import { CursorPage, withDeletedAt } from "./pagination";

/** What a record kept under a patient offers (vitals, vaccinations, prescriptions); each service adds only its own rules. */
export interface PatientRecordService<Row, View> {
  /** `actor` is the signed-in actor as the auth guard resolves it. */
  create(ctx: ServiceContext, actor: any, patientId: string, input: any): Promise<View>;
  /** The patient's records in the list's order (`keyset`); 404 for a patient not of the clinic. */
  list(ctx: ServiceContext, clinicId: string, patientId: string, page: PageRequest): Promise<Page<Row>>;
  /** Delta sync (`updated_since`): the patient's records changed after a moment, deleted ones included. */
  changedSince(ctx: ServiceContext, clinicId: string, patientId: string, since: Date, page: PageRequest): Promise<Page<Row>>;
  view(row: Row): View;
}

export interface PatientRecordDefinition<Name extends string, Item extends TSchema, Create extends TSchema, ListQuery extends TSchema, Row, View> {
  /** The path under `/patients/:id/` and the routes' tag (`vitals`). */
  name: Name;
  /** The TypeBox models; the list query carries `updated_since` and the cursor fields. */
  models: { item: Item; create: Create; listQuery: ListQuery };
  /** The list's order, and delta sync's. */
  keysets: { list: Keyset<Row>; changes: Keyset<Row> };
  service: PatientRecordService<Row, View>;
  /** Roles that may record one (reading is every role's). */
  writers: readonly Role[];
  summaries: { create: string; list: string };
}

/**
 * The two routes of a record kept under a patient: `POST /patients/:id/<name>` for the roles that
 * write it, and `GET /patients/:id/<name>`, a cursor list with delta sync, for every role.
 */
export function patientRecords<const Name extends string, Item extends TSchema, Create extends TSchema, ListQuery extends TSchema, Row, View>(
  { auth, services, paginator }: AppContext,
  definition: PatientRecordDefinition<Name, Item, Create, ListQuery, Row, View>,
) {
  const { name, models, keysets, service, writers, summaries } = definition;
  return new Elysia({ prefix: `/patients/:id/${name}` as `/patients/:id/${Name}`, tags: [name] as never })
    .use(auth)
    .post("/", async ({ actor, params, body, status }: any) => status(201, await service.create(services, actor, params.id, body)), {
      auth: writers as Role[],
      params: IdParams,
      body: models.create,
      response: { 201: models.item, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: summaries.create },
    })
    .get(
      "/",
      ({ actor, params, query }: any): Promise<any> =>
        paginator.records(query, {
          keyset: keysets.list,
          page: (page) => service.list(services, actor.clinicId, params.id, page as PageRequest),
          changes: keysets.changes,
          changedSince: (since, page) => service.changedSince(services, actor.clinicId, params.id, since, page),
        }, service.view),
      {
        auth: true,
        params: IdParams,
        query: models.listQuery,
        response: { 200: CursorPage(withDeletedAt(models.item)), ...errorResponses(400, 401, 404, 422) },
        detail: { summary: summaries.list },
      },
    );
}
