import { asc, sql, type AnyColumn, type SQL } from "drizzle-orm";

/** A keyset position: the sort values of the last row seen (Dates travel as epoch ms in a cursor). */
export type KeysetValue = Date | string | number;

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
