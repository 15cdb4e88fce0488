import { bigint, timestamp, uuid } from "drizzle-orm/pg-core";

/**
 * Timestamps keep millisecond precision (`timestamp(3)`) so that a keyset cursor,
 * which carries a JavaScript Date, names a row exactly.
 */
export const timestampColumn = (name: string) =>
  timestamp(name, { withTimezone: true, precision: 3, mode: "date" });

/** Money is an integer in the smallest currency unit; `bigint` read back as a JS number. */
export const moneyColumn = (name: string) => bigint(name, { mode: "number" });

/** Columns every clinic-owned record carries. Ids are UUIDv7, made by the app. */
export const recordColumns = () => ({
  id: uuid("id").primaryKey(),
  clinic_id: uuid("clinic_id").notNull(),
  created_at: timestampColumn("created_at").notNull(),
  updated_at: timestampColumn("updated_at").notNull(),
});

export const softDeleteColumn = () => ({ deleted_at: timestampColumn("deleted_at") });
