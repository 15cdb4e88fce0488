import { and, asc, count, desc, eq, getTableName, gt, gte, isNull, lt, type AnyColumn, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { newId } from "../lib/crypto";
import { AppError } from "../lib/errors";
import { dayRange, serialize } from "../lib/time";
import type { Db, ServiceContext } from "./client";
import { afterKeyset, keyset, type Keyset, type Page, type PageRequest } from "./keyset";

/** A clinic-owned, soft-deletable table: the columns every record carries. */
export type ClinicTable = PgTable & {
  id: PgColumn;
  clinic_id: PgColumn;
  created_at: PgColumn;
  updated_at: PgColumn;
  deleted_at: PgColumn;
};

/** A record as the API shows it: dates in RFC 3339, without the soft-delete marker. */
export function recordView<Row extends { deleted_at: Date | null }>(row: Row) {
  const { deleted_at: _deleted, ...visible } = row;
  return serialize(visible);
}

/**
 * A list's `date_from`/`date_to` filter on one column: inclusive days in the clinic's time zone,
 * as conditions for a page query.
 */
export function withinDays(column: AnyColumn, filters: { date_from?: string; date_to?: string }, timeZone: string): (SQL | undefined)[] {
  const range = dayRange(filters.date_from, filters.date_to, timeZone);
  return [range.from ? gte(column, range.from) : undefined, range.to ? lt(column, range.to) : undefined];
}

/** The clinic's live rows: every query of a clinic resource starts here. */
export const liveIn = (table: ClinicTable, clinicId: string): SQL => and(eq(table.clinic_id, clinicId), isNull(table.deleted_at))!;

/** A reference a body makes to another record of the clinic: its field, the id sent, where it must live. */
export interface Reference {
  field: string;
  id: string | null | undefined;
  records: { exists(ctx: ServiceContext, clinicId: string, id: string): Promise<boolean> };
  what: string;
}

/**
 * Every id a body sends must name a live record of the same clinic; otherwise 422 naming each
 * field. Another clinic's id is refused exactly like a missing one, so ids never leak.
 */
export async function assertReferenced(ctx: ServiceContext, clinicId: string, references: Reference[]): Promise<void> {
  const fields = [];
  for (const reference of references) {
    if (reference.id && !(await reference.records.exists(ctx, clinicId, reference.id))) {
      fields.push({ path: `body.${reference.field}`, message: `No such ${reference.what} in this clinic` });
    }
  }
  if (fields.length) throw AppError.validation(fields);
}

/**
 * Shared record operations for clinic resources, so each service states only its own rules.
 * Another clinic's id behaves exactly like a missing one: 404.
 */
export function clinicRecords<T extends ClinicTable>(table: T, label: string) {
  type Row = T["$inferSelect"];
  const db = (ctx: ServiceContext) => ctx.db as unknown as Db;
  /** Every clinic list: oldest first by creation, then id. */
  const order: Keyset<Row> = keyset(getTableName(table), [table.created_at, table.id]);
  return {
    keyset: order,
    async find(ctx: ServiceContext, clinicId: string, id: string): Promise<Row> {
      const [row] = await db(ctx).select().from(table as PgTable).where(and(liveIn(table, clinicId), eq(table.id, id))).limit(1);
      if (!row) throw AppError.notFound(label, id);
      return row as Row;
    },

    /** Whether a live record with this id exists in the clinic (for references). */
    async exists(ctx: ServiceContext, clinicId: string, id: string): Promise<boolean> {
      const [row] = await db(ctx).select({ id: table.id }).from(table as PgTable).where(and(liveIn(table, clinicId), eq(table.id, id))).limit(1);
      return Boolean(row);
    },

    async insert(ctx: ServiceContext, clinicId: string, values: Record<string, unknown>): Promise<Row> {
      const now = ctx.clock.now();
      const [row] = (await db(ctx).insert(table).values({ ...values, id: newId(), clinic_id: clinicId, created_at: now, updated_at: now } as never).returning()) as unknown[];
      return row as Row;
    },

    async update(ctx: ServiceContext, clinicId: string, id: string, changes: Record<string, unknown>): Promise<Row> {
      const [row] = (await db(ctx)
        .update(table)
        .set({ ...changes, updated_at: ctx.clock.now() } as never)
        .where(and(liveIn(table, clinicId), eq(table.id, id)))
        .returning()) as unknown[];
      if (!row) throw AppError.notFound(label, id);
      return row as Row;
    },

    async softDelete(ctx: ServiceContext, clinicId: string, id: string): Promise<void> {
      const now = ctx.clock.now();
      const rows = (await db(ctx)
        .update(table)
        .set({ deleted_at: now, updated_at: now } as never)
        .where(and(liveIn(table, clinicId), eq(table.id, id)))
        .returning()) as unknown[];
      if (rows.length === 0) throw AppError.notFound(label, id);
    },

    /**
     * One page of live rows matching `filters`, in (created_at, id) order or `keys`': limit + 1 rows in the
     * cursor form (the extra one says there is more), or the page and the total in the offset form.
     */
    page(ctx: ServiceContext, clinicId: string, filters: (SQL | undefined)[], page: PageRequest, keys: Keyset<Row> = order): Promise<Page<Row>> {
      return pageOf<Row>(db(ctx), table, [liveIn(table, clinicId), ...filters], page, keys);
    },

    /** Delta sync: the clinic's rows changed after `since`, deleted ones included, oldest change first. */
    changes: changesKeyset<Row>(table),
    /** `scope` narrows to a parent's rows (a patient's vaccinations), as the list it syncs. */
    changedSince(ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest, scope: (SQL | undefined)[] = []): Promise<Page<Row>> {
      return changedSince<Row>(db(ctx), table, clinicId, since, page, this.changes, scope);
    },
  };
}

/** A table whose rows say when they last changed: what delta sync (`updated_since`) reads. */
export type ChangingTable = PgTable & { id: PgColumn; clinic_id: PgColumn; updated_at: PgColumn };

/** Delta sync's order over a table: by the last change, then id. */
export const changesKeyset = <Row>(table: ChangingTable): Keyset<Row> => keyset<Row>(`${getTableName(table)}:changes`, [table.updated_at, table.id]);

/**
 * Delta sync: the clinic's rows of `table` changed after `since` (within `scope`), deleted ones
 * included (a soft delete sets updated_at with deleted_at), oldest change first.
 */
export function changedSince<Row>(db: Db, table: ChangingTable, clinicId: string, since: Date, page: PageRequest, keys: Keyset<Row>, scope: (SQL | undefined)[] = []): Promise<Page<Row>> {
  return pageOf<Row>(db, table, [eq(table.clinic_id, clinicId), gt(table.updated_at, since), ...scope], page, keys);
}

/** Keyset or offset page over `table` in the keyset's order (ascending, or descending when the cursor request says so). */
export async function pageOf<Row>(db: Db, table: PgTable, conditions: (SQL | undefined)[], page: PageRequest, keys: Keyset<Row>): Promise<Page<Row>> {
  const sort = keys.columns;
  const where = and(...conditions);
  const descending = page.kind === "cursor" && page.descending === true;
  const order = sort.map((c) => (descending ? desc(c) : asc(c)));
  if (page.kind === "cursor") {
    const rows = await db.select().from(table).where(and(where, afterKeyset(sort, page.after, descending))).orderBy(...order).limit(page.limit + 1);
    return { rows: rows as Row[], total: null };
  }
  const [rows, [totals]] = await Promise.all([
    db.select().from(table).where(where).orderBy(...order).limit(page.limit).offset(page.offset),
    db.select({ n: count() }).from(table).where(where),
  ]);
  return { rows: rows as Row[], total: Number(totals?.n ?? 0) };
}
