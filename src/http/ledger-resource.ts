import { Elysia, t, type TSchema } from "elysia";
import type { AppContext } from "../context";
import type { Db, ServiceContext } from "../db/client";
import type { Page, PageRequest } from "../db/keyset";
import type { RecordReader } from "./clinic-resource";
import type { Role } from "../db/schema";
import { errorResponses, IdParams } from "./common-model";
import { CursorPage, updatedSinceQueryField, withDeletedAt } from "./pagination";

/** What an append-only financial record's service offers (payments, refunds, tax documents). */
export interface LedgerService<Row, View> {
  /** Runs inside the idempotency transaction (`db` is its handle). */
  create(ctx: ServiceContext, clinicId: string, input: any): Promise<View>;
  list(ctx: ServiceContext, clinicId: string, timeZone: string, filters: any, page: PageRequest): Promise<Page<Row>>;
  view(row: Row): View;
}

export interface LedgerDefinition<Path extends string, Item extends TSchema, Create extends TSchema, ListQuery extends TSchema, Row, View> {
  /** The path under its module (`/payments`). */
  path: Path;
  /** The TypeBox models; the routes' types (and Eden's) come from them. */
  models: { item: Item; create: Create; listQuery: ListQuery };
  /** Its clinic records (db/clinic-records): the list's order (by creation, then id) and reads. */
  records: RecordReader<Row>;
  service: LedgerService<Row, View>;
  /** Roles allowed (default: every role of the clinic). */
  roles?: readonly Role[];
  /** The create route's summary (it says what is recorded and that an Idempotency-Key is accepted). */
  createSummary: string;
}

/**
 * The three routes of an append-only financial record: an idempotent create (a replayed
 * Idempotency-Key answers 200 with the stored response), the cursor list, and a read.
 */
export function ledgerResource<const Path extends string, Item extends TSchema, Create extends TSchema, ListQuery extends TSchema, Row, View>(
  { auth, idempotency, services, paginator }: AppContext,
  definition: LedgerDefinition<Path, Item, Create, ListQuery, Row, View>,
) {
  const { path, models, records, service, roles } = definition;
  const forbidden = roles ? [403 as const] : [];
  // Delta sync on the list (`updated_since`, src/http/pagination.ts), typed as the resource's own query.
  const listQuery = t.Object({ ...(models.listQuery as unknown as { properties: Record<string, TSchema> }).properties, ...updatedSinceQueryField }) as unknown as ListQuery;
  return new Elysia({ prefix: path, tags: ["billing"] as never })
    .use(auth)
    .use(idempotency)
    .guard({ auth: roles ?? true })
    .post("/", ({ actor, body, idempotently }: any) => idempotently(actor.clinicId, body, (db: Db) => service.create({ ...services, db }, actor.clinicId, body)), {
      body: models.create,
      response: { 200: models.item, 201: models.item, ...errorResponses(400, 401, ...forbidden, 409, 422) },
      detail: { "x-idempotent": true, summary: definition.createSummary },
    })
    .get(
      "/",
      ({ actor, query }: any): Promise<any> =>
        paginator.records(query, {
          keyset: records.keyset,
          page: (page) => service.list(services, actor.clinicId, actor.clinic.timezone, query, page),
          changes: records.changes,
          changedSince: (since, page) => records.changedSince(services, actor.clinicId, since, page),
        }, service.view),
      { query: listQuery, response: { 200: CursorPage(withDeletedAt(models.item)), ...errorResponses(400, 401, ...forbidden, 422) } },
    )
    .get("/:id", async ({ actor, params }: any) => service.view(await records.find(services, actor.clinicId, params.id)), {
      params: IdParams,
      response: { 200: models.item, ...errorResponses(401, ...forbidden, 404, 422) },
    });
}
