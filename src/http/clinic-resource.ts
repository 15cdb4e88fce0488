import { Elysia, t, type Static, type TSchema } from "elysia";
import type { ServiceContext } from "../db/client";
import type { AppContext } from "../context";
import type { Role } from "../db/schema";
import { errorResponses, IdParams } from "./common-model";
import type { Keyset, Page, PageRequest } from "../db/keyset";
import { PageResponse, updatedSinceQueryField, withDeletedAt, type RecordSource } from "./pagination";

/** Who asks, as a list needs it: the clinic, and its time zone for date filters. */
export interface ListActor {
  clinicId: string;
  timezone: string;
}

/** How a resource's rows are read: the list's order and one live row of the clinic (404 otherwise). */
export interface RecordReader<Row> {
  keyset: Keyset<Row>;
  find(ctx: ServiceContext, clinicId: string, id: string): Promise<Row>;
  /** Delta sync (`updated_since`): its order, and the rows changed after a moment, deleted ones included. */
  changes: Keyset<Row>;
  changedSince(ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest): Promise<Page<Row>>;
}

/** What a clinic-scoped resource's service offers; each service adds only its own rules. */
export interface ClinicResourceService<Row, View, Create, Update, Filters> {
  /** One page of the list, in the order `listKeyset` picks for the filters (the records' keyset by default). */
  list(ctx: ServiceContext, actor: ListActor, filters: Filters, page: PageRequest): Promise<Page<Row>>;
  listKeyset?(filters: Filters): Keyset<Row>;
  create(ctx: ServiceContext, clinicId: string, input: Create): Promise<View>;
  update(ctx: ServiceContext, clinicId: string, id: string, input: Update): Promise<View>;
  remove(ctx: ServiceContext, clinicId: string, id: string): Promise<void>;
  view(row: Row): View;
}

export interface ClinicResourceDefinition<Name extends string, Item extends TSchema, Create extends TSchema, Update extends TSchema, ListQuery extends TSchema, Row> {
  /** The path and tag (`tutors`), and the list's name in its cursors. */
  name: Name;
  /** The TypeBox models; the routes' types (and Eden's) come from them. */
  models: { item: Item; create: Create; update: Update; listQuery: ListQuery };
  /** Its clinic records (db/clinic-records): the list's order (by creation, then id) and reads. */
  records: RecordReader<Row>;
  service: ClinicResourceService<Row, unknown, Static<Create>, Static<Update>, Static<ListQuery>>;
  /** OpenAPI summaries of the list, the update and the delete, where they say more than the method. */
  summaries?: { list?: string; update?: string; remove?: string };
  /** Statuses beyond the common ones: a create or update that can conflict (a state machine, a taken slot), a delete that can be blocked. */
  conflicts?: { create?: boolean; update?: boolean; remove?: boolean };
  /** Roles that may create, update and delete; every signed-in role reads. Left out: every role writes. */
  writeRoles?: readonly Role[];
}

/**
 * The five routes of a clinic-scoped resource (list in both page forms, create, read, update,
 * soft delete), for every signed-in role of the clinic, from its models and its service.
 */
export function clinicResource<const Name extends string, Item extends TSchema, Create extends TSchema, Update extends TSchema, ListQuery extends TSchema, Row>(
  { auth, services, paginator }: AppContext,
  definition: ClinicResourceDefinition<Name, Item, Create, Update, ListQuery, Row>,
) {
  const { name, models, records, summaries = {}, conflicts = {}, writeRoles } = definition;
  // Writing with a role list adds 403 to the answers.
  const writeAuth = writeRoles ? { auth: writeRoles } : {};
  const forbidden = writeRoles ? errorResponses(403) : {};
  // The routes validate with the models; past them, bodies and queries have the service's types.
  const service = definition.service as ClinicResourceService<Row, any, any, any, any>;
  const withSummary = (summary: string | undefined) => (summary ? { detail: { summary } } : {});
  // Delta sync on every list (`updated_since`, src/http/pagination.ts).
  const listQuery = t.Object({
    ...(models.listQuery as unknown as { properties: Record<string, TSchema> }).properties,
    ...updatedSinceQueryField,
  }) as unknown as ListQuery; // typed as the resource's own query: Eden's types stay as deep as before
  const listItem = withDeletedAt(models.item);
  const source = (actor: { clinicId: string; clinic: { timezone: string } }, query: any): RecordSource<Row> => ({
    keyset: records.keyset,
    ...(service.listKeyset ? { keysetFor: service.listKeyset } : {}),
    page: (page) => service.list(services, { clinicId: actor.clinicId, timezone: actor.clinic.timezone }, query, page),
    changes: records.changes,
    changedSince: (since, page) => records.changedSince(services, actor.clinicId, since, page),
  });
  return new Elysia({ prefix: `/${name}` as `/${Name}`, tags: [name] as never })
    .use(auth)
    .guard({ auth: true })
    .get(
      "/",
      ({ actor, query }: { actor: { clinicId: string; clinic: { timezone: string } }; query: any }) => paginator.records(query, source(actor, query), service.view),
      { query: listQuery, response: { 200: PageResponse(listItem), ...errorResponses(400, 401, 422) }, ...withSummary(summaries.list) },
    )
    .post("/", async ({ actor, body, status }: any) => status(201, await service.create(services, actor.clinicId, body)), {
      body: models.create,
      response: { 201: models.item, ...(conflicts.create ? errorResponses(401, 409, 422) : errorResponses(401, 422)), ...forbidden },
      ...writeAuth,
    })
    .get("/:id", async ({ actor, params }: any) => service.view(await records.find(services, actor.clinicId, params.id)), {
      params: IdParams,
      response: { 200: models.item, ...errorResponses(401, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }: any) => service.update(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: models.update,
      response: { 200: models.item, ...(conflicts.update ? errorResponses(401, 404, 409, 422) : errorResponses(401, 404, 422)), ...forbidden },
      ...withSummary(summaries.update),
      ...writeAuth,
    })
    .delete(
      "/:id",
      async ({ actor, params, status }: any) => {
        await service.remove(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      {
        params: IdParams,
        response: { 204: t.Void(), ...(conflicts.remove ? errorResponses(401, 404, 409, 422) : errorResponses(401, 404, 422)), ...forbidden },
        ...withSummary(summaries.remove),
        ...writeAuth,
      },
    );
}
