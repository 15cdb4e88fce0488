import { bigint, integer, pgTable, primaryKey, uuid } from "drizzle-orm/pg-core";

/**
 * The burst cap's sliding minute, shared by instances: calls per principal (an API key) and
 * second. A row at second `s` stands for calls made at or before `s`, so it is counted while
 * `s` is less than a minute ago. Calls granted to an instance and not used yet sit at the
 * second their grant expires, so they count until they can no longer be used. Rows older than
 * two minutes are deleted by the next grant to the same principal.
 */
export const quotaBurstSeconds = pgTable(
  "quota_burst_seconds",
  {
    principal_id: uuid("principal_id").notNull(),
    second: bigint("second", { mode: "number" }).notNull(),
    calls: integer("calls").notNull(),
  },
  (t) => [primaryKey({ columns: [t.principal_id, t.second] })],
);
