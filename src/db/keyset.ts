import { asc, sql, type AnyColumn, type SQL } from "drizzle-orm";

/** A keyset position: the sort values of the last row seen (Dates travel as epoch ms in a cursor). */
export type KeysetValue = Date | string | number;

/** A page as a list asks for it: after a keyset position (cursor form) or at an offset. */
export type PageRequest =
  | { kind: "cursor"; limit: number; after: KeysetValue[] | null; descending?: boolean }
  | { kind: "offset"; limit: number; offset: number };

/**
 * What every list service returns: the page's rows (in the cursor form up to limit + 1, the
 * extra one only saying there is more) and, in the offset form, the total.
 */
export interface Page<Row> {
  rows: Row[];
  total: number | null;
}

/**
 * A list's order, declared once beside its query: its name (a cursor from another list is
 * refused), the columns it sorts by, and how to read them from a row. The SQL order, the
 * cursor's contents and its check all derive from it.
 */
export interface Keyset<Row = any> {
  list: string;
  columns: AnyColumn[];
  valuesOf(row: Row): KeysetValue[];
}

export function keyset<Row = any>(list: string, columns: AnyColumn[], valuesOf?: (row: Row) => KeysetValue[]): Keyset<Row> {
  return { list, columns, valuesOf: valuesOf ?? ((row) => columns.map((column) => (row as Record<string, KeysetValue>)[column.name]!)) };
}

/** The sort as a cursor names it, e.g. "created_at:date,id:text": dates travel as numbers. */
export const sortSpec = (keys: Keyset): string[] => keys.columns.map((column) => `${column.name}:${column.dataType === "date" ? "date" : "text"}`);

/**
 * `(a, b) > ($1, $2)` (or `<` newest first): a row-value comparison that the (clinic_id, a, b)
 * index serves directly, in either direction.
 */
export function afterKeyset(columns: AnyColumn[], values: KeysetValue[] | null, descending = false): SQL | undefined {
  if (!values) return undefined;
  const left = sql.join(columns.map((c) => sql`${c}`), sql`, `);
  const right = sql.join(values.map((v, i) => sql`${sql.param(v, columns[i])}`), sql`, `);
  return descending ? sql`(${left}) < (${right})` : sql`(${left}) > (${right})`;
}

export const ascending = (columns: AnyColumn[]) => columns.map((c) => asc(c));
