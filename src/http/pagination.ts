import { t, type TSchema } from "elysia";
import { AppError } from "../lib/errors";
import { hmacSha256, safeEqual } from "../lib/crypto";
import type { KeysetValue } from "../db/keyset";

/** Query fields every list accepts. Offset only where a list allows it. */
export const cursorQueryFields = {
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 50, description: "Items per page, 1–200" })),
  cursor: t.Optional(t.String({ maxLength: 512, description: "Opaque cursor from next_cursor" })),
};
export const offsetQueryFields = {
  ...cursorQueryFields,
  offset: t.Optional(t.Integer({ minimum: 0, maximum: 10_000_000, description: "Legacy offset form" })),
};

export const CursorPage = <T extends TSchema>(item: T) =>
  t.Object({ data: t.Array(item), next_cursor: t.Union([t.String(), t.Null()]), has_more: t.Boolean() });
export const OffsetPage = <T extends TSchema>(item: T) =>
  t.Object({ data: t.Array(item), total_count: t.Integer(), limit: t.Integer(), offset: t.Integer() });
export const PageResponse = <T extends TSchema>(item: T) => t.Union([CursorPage(item), OffsetPage(item)]);

export type { KeysetValue };

/** `order=desc` on the lists where newest first is natural (usage log, invoices, payments). */
export const orderQueryField = {
  order: t.Optional(t.Union([t.Literal("asc"), t.Literal("desc")], { default: "asc", description: "asc: oldest first (default); desc: newest first" })),
};

export type PageRequest =
  | { kind: "cursor"; limit: number; after: KeysetValue[] | null; descending?: boolean }
  | { kind: "offset"; limit: number; offset: number };

export interface ListKey {
  /** Names the list, so a cursor from another list is refused. */
  list: string;
  /** The sort the keyset follows, e.g. ["created_at:date", "id:text"]. */
  sort: readonly string[];
}

export const DEFAULT_LIMIT = 50;

const directed = (key: ListKey, descending: boolean): ListKey => (descending ? { ...key, list: `${key.list}:desc` } : key);

/**
 * One pagination mechanism for every list: cursors are base64url JSON signed with an HMAC
 * (tamper-evident) and bound to the list and its sort order.
 */
export class Paginator {
  constructor(private readonly secret: string) {}

  request(query: { limit?: number; cursor?: string; offset?: number }, key: ListKey): PageRequest {
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (query.cursor !== undefined && query.offset !== undefined) {
      throw new AppError("INVALID_PAGINATION", "Use either cursor or offset, not both");
    }
    if (query.offset !== undefined) return { kind: "offset", limit, offset: query.offset };
    return this.cursorRequest(query, key);
  }

  /** For lists that only have the cursor form. */
  cursorRequest(query: { limit?: number; cursor?: string; order?: "asc" | "desc" }, key: ListKey): PageRequest & { kind: "cursor" } {
    const descending = query.order === "desc";
    // A cursor is bound to its direction too: one from the other order is INVALID_CURSOR.
    const after = query.cursor ? this.decode(query.cursor, directed(key, descending)) : null;
    return { kind: "cursor", limit: query.limit ?? DEFAULT_LIMIT, after, ...(descending ? { descending } : {}) };
  }

  /**
   * The cursor envelope for a page a service fetched: `rows` holds up to limit + 1 rows (the
   * extra one only says there is more), `view` shapes each row, and the next cursor holds the
   * last row's values of the key's sort columns (or what `sortValues` reads, for joined rows).
   */
  cursorPage<Row, View = Row>(
    rows: Row[],
    request: PageRequest & { kind: "cursor" },
    key: ListKey,
    view: (row: Row) => View = (row) => row as unknown as View,
    sortValues: (row: Row) => KeysetValue[] = (row) => key.sort.map((spec) => (row as Record<string, KeysetValue>)[spec.split(":")[0]!]!),
  ) {
    const hasMore = rows.length > request.limit;
    const page = hasMore ? rows.slice(0, request.limit) : rows;
    const last = page[page.length - 1];
    return { data: page.map(view), next_cursor: hasMore && last ? this.encode(sortValues(last), directed(key, request.descending === true)) : null, has_more: hasMore };
  }

  offsetPage<Row>(rows: Row[], total: number, request: PageRequest & { kind: "offset" }) {
    return { data: rows, total_count: total, limit: request.limit, offset: request.offset };
  }

  /** Either envelope for a page a service fetched (`rows` holds limit + 1 in the cursor form). */
  respond<Row, View>(request: PageRequest, result: { rows: Row[]; total: number }, key: ListKey, view: (row: Row) => View) {
    if (request.kind === "offset") return this.offsetPage(result.rows.map(view), result.total, request);
    return this.cursorPage(result.rows, request, key, view);
  }

  encode(values: KeysetValue[], key: ListKey): string {
    const payload = Buffer.from(
      JSON.stringify({ l: key.list, s: key.sort.join(","), v: values.map((v) => (v instanceof Date ? v.getTime() : v)) }),
    ).toString("base64url");
    return `${payload}.${hmacSha256(this.secret, payload)}`;
  }

  decode(cursor: string, key: ListKey): KeysetValue[] {
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
