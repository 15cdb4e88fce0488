import { index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { timestampColumn } from "./columns";
import { users } from "./clinics";

/**
 * Facts about the whole install, one row each (`name` → `value`). `secrets_key_check` is a MAC
 * of a constant under SECRETS_KEY: it tells whether a key opens this database's secrets, and
 * never gives the key away.
 */
export const installSettings = pgTable("install_settings", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  updated_at: timestampColumn("updated_at").notNull(),
});

/**
 * Single-use invitations to open a clinic (REGISTRATION=invite), made by an install
 * administrator. Only the token's SHA-256 is kept.
 */
export const invitations = pgTable(
  "invitations",
  {
    id: uuid("id").primaryKey(),
    token_hash: text("token_hash").notNull(),
    note: text("note"),
    created_by: uuid("created_by")
      .notNull()
      .references(() => users.id),
    expires_at: timestampColumn("expires_at").notNull(),
    used_at: timestampColumn("used_at"),
    /** The owner the invitation made. */
    used_by: uuid("used_by").references(() => users.id),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [uniqueIndex("invitations_token_hash_key").on(t.token_hash), index("invitations_created_idx").on(t.created_at)],
);
