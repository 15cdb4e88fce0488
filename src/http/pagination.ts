import { t, type TSchema } from "elysia";
import type { TObject } from "@sinclair/typebox";
import { AppError } from "../lib/errors";
import { hmacSha256, safeEqual } from "../lib/crypto";
import { sortSpec, type Keyset, type KeysetValue, type Page, type PageRequest } from "../db/keyset";
import { rfc3339 } from "../lib/time";
import { NullableTimestamp, Timestamp } from "./common-model";

/** Query fields every list accepts. Offset only where a list allows it. */
export const cursorQueryFields = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 50, description: "Items per page, 1–200" })),
  cursor: t.Optional(t.String({ maxLength: 512, description: "Opaque cursor from next_cursor" })),
};
export const offsetQueryFields = {
  ...cursorQueryFields,
  offset: t.Optional(t.Integer({ minimum: 0, maximum: 10_000_000, description: "Legacy offset form" })),
};

/**
 * Delta sync, on every list of records: `updated_since` returns what changed after it, deleted
 * records included with their `deleted_at`, so a receiver that missed events can catch up.
 */
export const updatedSinceQueryField = {
  updated_since: t.Optional(t.String({ ...Timestamp, description: "Only records changed after this instant (RFC 3339), deleted ones included with deleted_at; oldest change first; takes no other filter" })),
};

/** A list's item as delta sync answers it: the record, and `deleted_at` (null while it lives). */
export const withDeletedAt = <T extends TSchema>(item: T): T =>
  t.Object({ ...(item as unknown as TObject).properties, deleted_at: t.Optional(NullableTimestamp) }) as unknown as T;

const deletedAt = (row: unknown) => (row as { deleted_at?: Date | null }).deleted_at ?? null;

/** Query fields delta sync takes beside `updated_since`. */
const DELTA_FIELDS = ["updated_since", "limit", "cursor"];

export const CursorPage = <T extends TSchema>(item: T) =>
  t.Object({ data: t.Array(item), next_cursor: t.Union([t.String(), t.Null()]), has_more: t.Boolean() });
export const OffsetPage = <T extends TSchema>(item: T) =>
  t.Object({ data: t.Array(item), total_count: t.Integer(), limit: t.Integer(), offset: t.Integer() });
export const PageResponse = <T extends TSchema>(item: T) => t.Union([CursorPage(item), OffsetPage(item)]);

/** A cursor page's body, for clients and tests that type their responses. */
export type CursorPageBody<Item> = { data: Item[]; next_cursor: string | null; has_more: boolean };

export type { KeysetValue, PageRequest };

/** `order=desc` on the lists where newest first is natural (usage log, invoices, payments). */
export const orderQueryField = {
  order: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")], { default: "asc", description: "asc: oldest first (default); desc: newest first" })),
};

type CursorRequest = Extract<PageRequest, { kind: "cursor" }>;
/** A list's query as the paginator reads it (its filters are the list's own). */
type ListQuery = { limit?: number; cursor?: string; offset?: number; order?: "asc" | "desc"; updated_since?: string } & Record<string, unknown>;

/**
 * A list of records as a route declares it once: its order and page query, and its delta sync
 * (`updated_since`): the changes' order (updated_at, id) and the rows changed after an instant,
 * deleted ones included. The paginator answers either from the query (`Paginator.records`).
 */
export interface RecordSource<Row, Request extends PageRequest = PageRequest> {
  /** The list's order; `keysetFor` picks another for a query that asks for one (visits by date). */
  keyset: Keyset<Row>;
  keysetFor?(query: Record<string, unknown>): Keyset<Row>;
  /** One page of the list, in the order the keyset names (a cursor page, or an offset page where the list allows it). */
  page(page: Request): Promise<Page<Row>>;
  changes: Keyset<Row>;
  changedSince(since: Date, page: CursorRequest): Promise<Page<Row>>;
}
interface OffsetEnvelope<View> {
  data: View[];
  total_count: number;
  limit: number;
  offset: number;
}

/** What a cursor is bound to: the list, its sort, and its direction. */
interface ListKey {
  list: string;
  sort: readonly string[];
}

export const DEFAULT_LIMIT = 50;

const listKey = (keys: Keyset, descending: boolean): ListKey => ({ list: descending ? `${keys.list}:desc` : keys.list, sort: sortSpec(keys) });

/**
 * One pagination mechanism for every list: cursors are base64url JSON signed with an HMAC
 * (tamper-evident) and bound to the list and its sort order.
 */
export class Paginator {
  constructor(private readonly secret: string) {}

  /**
   * The page a list's query asks for: `offset` (only lists that declare it), or a cursor, in
   * the order `order` asks for (only lists that declare it; a cursor keeps its direction).
   */
  private request(query: { limit?: number; cursor?: string; offset?: number; order?: "asc" | "desc" }, keys: Keyset): PageRequest {
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (query.cursor !== undefined && query.offset !== undefined) {
      throw new AppError("INVALID_PAGINATION", "Use either cursor or offset, not both");
    }
    if (query.offset !== undefined) return { kind: "offset", limit, offset: query.offset };
    const descending = query.order === "desc";
    // A cursor is bound to its direction too: one from the other order is INVALID_CURSOR.
    const after = query.cursor ? this.decode(query.cursor, listKey(keys, descending)) : null;
    return { kind: "cursor", limit, after, ...(descending ? { descending } : {}) };
  }

  /**
   * The envelope of a page a service fetched, in the form it was asked for; `view` shapes each
   * row, and the next cursor holds the last row's sort values.
   */
  private respond<Row, View>(request: PageRequest, page: Page<Row>, keys: Keyset<Row>, view: (row: Row) => View): CursorPageBody<View> | OffsetEnvelope<View> {
    if (request.kind === "offset") return { data: page.rows.map(view), total_count: page.total ?? 0, limit: request.limit, offset: request.offset };
    const hasMore = page.rows.length > request.limit;
    const rows = hasMore ? page.rows.slice(0, request.limit) : page.rows;
    const last = rows[rows.length - 1];
    const next = hasMore && last ? this.encode(keys.valuesOf(last), listKey(keys, request.descending === true)) : null;
    return { data: rows.map(view), next_cursor: next, has_more: hasMore };
  }

  /** A list route in one call: the page the query asks for, fetched by `fetch`, shaped by `view`. */
  async list<Row, View>(query: { limit?: number; cursor?: string; offset?: undefined; order?: "asc" | "desc" }, keys: Keyset<Row>, fetch: (page: CursorRequest) => Promise<Page<Row>>, view: (row: Row) => View): Promise<CursorPageBody<View>>;
  async list<Row, View>(query: { limit?: number; cursor?: string; offset?: number; order?: "asc" | "desc" }, keys: Keyset<Row>, fetch: (page: PageRequest) => Promise<Page<Row>>, view: (row: Row) => View): Promise<CursorPageBody<View> | OffsetEnvelope<View>>;
  async list<Row, View>(query: { limit?: number; cursor?: string; offset?: number; order?: "asc" | "desc" }, keys: Keyset<Row>, fetch: (page: any) => Promise<Page<Row>>, view: (row: Row) => View) {
    const page = this.request(query, keys);
    return this.respond(page, await fetch(page), keys, view);
  }

  /**
   * A list's delta sync (`updated_since`): the rows `fetch` finds changed after the instant, in
   * the `changes` keyset's order (updated_at, id), each shaped by `view` with its `deleted_at`.
   * Other filters are refused (422): the answer is every change, for a receiver to catch up.
   */
  async changes<Row, View>(
    query: { limit?: number; cursor?: string; updated_since?: string } & Record<string, unknown>,
    keys: Keyset<Row>,
    fetch: (since: Date, page: CursorRequest) => Promise<Page<Row>>,
    view: (row: Row) => View,
  ): Promise<CursorPageBody<View & { deleted_at: string | null }>> {
    // `order` defaults to asc, which delta sync is (oldest change first); desc is refused.
    const others = Object.keys(query).filter((key) => !DELTA_FIELDS.includes(key) && query[key] !== undefined && !(key === "order" && query[key] === "asc"));
    if (others.length) throw AppError.validation(others.map((key) => ({ path: `query.${key}`, message: "Not with updated_since (delta sync takes limit and cursor only)" })), "updated_since takes no other filter");
    const since = new Date(query.updated_since as string);
    return this.list({ limit: query.limit, cursor: query.cursor }, keys, (page) => fetch(since, page), (row) => ({
      ...view(row),
      deleted_at: deletedAt(row) ? rfc3339(deletedAt(row)!) : null,
    }));
  }

  /**
   * A list of records with delta sync, in one call: `updated_since` answers the source's changes
   * (see `changes`), any other query its list in the order `keysetFor` picks for the query.
   */
  records<Row, View>(query: ListQuery & { offset?: undefined }, source: RecordSource<Row, CursorRequest>, view: (row: Row) => View): Promise<CursorPageBody<View>>;
  records<Row, View>(query: ListQuery, source: RecordSource<Row>, view: (row: Row) => View): Promise<CursorPageBody<View> | OffsetEnvelope<View>>;
  records<Row, View>(query: ListQuery, source: RecordSource<Row, any>, view: (row: Row) => View): Promise<CursorPageBody<View> | OffsetEnvelope<View>> {
    if (query.updated_since !== undefined) return this.changes(query, source.changes, source.changedSince, view);
    return this.list(query, source.keysetFor?.(query) ?? source.keyset, source.page, view);
  }

  private encode(values: KeysetValue[], key: ListKey): string {
    const payload = Buffer.from(
      JSON.stringify({ l: key.list, s: key.sort.join(","), v: values.map((v) => (v instanceof Date ? v.getTime() : v)) }),
    ).toString("base64url");
    return `${payload}.${hmacSha256(this.secret, payload)}`;
  }

  private decode(cursor: string, key: ListKey): KeysetValue[] {
    const invalid = () => new AppError("INVALID_CURSOR", "The cursor is not valid for this list");
    const [payload, signature, extra] = cursor.split(".");
    if (!payload || !signature || extra !== undefined) throw invalid();
    if (!safeEqual(signature, hmacSha256(this.secret, payload))) throw invalid();
    let parsed: { l?: unknown; s?: unknown; v?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    } catch {
      throw invalid();
    }
    if (parsed.l !== key.list || parsed.s !== key.sort.join(",") || !Array.isArray(parsed.v)) throw invalid();
    if (parsed.v.length !== key.sort.length) throw invalid();
    return key.sort.map((spec, i) => {
      const value = (parsed.v as unknown[])[i];
      const type = spec.split(":")[1];
      if (type === "date") {
        if (typeof value !== "number") throw invalid();
        return new Date(value);
      }
      if (typeof value !== "string" && typeof value !== "number") throw invalid();
      return value;
    });
  }
}
