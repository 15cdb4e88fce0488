import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, text, uniqueIndex, uuid, index } from "drizzle-orm/pg-core";
import { timestampColumn, softDeleteColumn } from "./columns";

/** The languages the clinic's messages to tutors and its console are written in. */
export const CLINIC_LANGUAGES = ["es", "en"] as const;
export type ClinicLanguage = (typeof CLINIC_LANGUAGES)[number];

export const PLANS = ["standard", "pro", "enterprise"] as const;
export type Plan = (typeof PLANS)[number];

export const clinics = pgTable(
  "clinics",
  {
    id: uuid("id").primaryKey(),
    name: text("name").notNull(),
    /** The issuer data SII documents need: razón social, RUT (normalized 12345678-5), address, giro. */
    legal_name: text("legal_name"),
    rut: text("rut"),
    address: text("address"),
    /** The phone tutors call (the online booking page shows it). */
    phone: text("phone"),
    giro: text("giro"),
    /** More issuer data a DTE carries: Acteco (the SII's economic activity code), comuna, and the SII resolution authorizing the clinic to issue (number 0 while certifying). */
    economic_activity_code: text("economic_activity_code"),
    commune: text("commune"),
    sii_resolution_number: integer("sii_resolution_number"),
    sii_resolution_date: text("sii_resolution_date"),
    timezone: text("timezone").notNull().default("UTC"),
    currency: text("currency").notNull().default("CLP"),
    tax_rate_bps: integer("tax_rate_bps").notNull().default(1900),
    plan: text("plan").$type<Plan>().notNull().default("standard"),
    /** Only for the enterprise plan; the other plans take their burst cap from the plan. */
    burst_per_minute: integer("burst_per_minute"),
    /** The language of messages to tutors and of the console (one of CLINIC_LANGUAGES). */
    language: text("language").$type<ClinicLanguage>().notNull().default("es"),
    created_at: timestampColumn("created_at").notNull(),
    updated_at: timestampColumn("updated_at").notNull(),
  },
  (t) => [
    check("clinics_plan_check", sql`${t.plan} in ('standard', 'pro', 'enterprise')`),
    check("clinics_language_check", sql`${t.language} in ('es', 'en')`),
  ],
);

export const ROLES = ["owner", "vet", "staff"] as const;
export type Role = (typeof ROLES)[number];

export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id")
      .notNull()
      .references(() => clinics.id),
    /** Stored lower-cased: email identity is case-insensitive. */
    email: text("email").notNull(),
    name: text("name").notNull(),
    role: text("role").$type<Role>().notNull(),
    password_hash: text("password_hash").notNull(),
    /** An install administrator: may act on the whole install (backups, invitations), whatever their clinic role. */
    is_admin: boolean("is_admin").notNull().default(false),
    created_at: timestampColumn("created_at").notNull(),
    updated_at: timestampColumn("updated_at").notNull(),
    ...softDeleteColumn(),
  },
  (t) => [
    uniqueIndex("users_email_live_key").on(t.email).where(sql`${t.deleted_at} is null`),
    index("users_clinic_created_idx").on(t.clinic_id, t.created_at, t.id),
    check("users_role_check", sql`${t.role} in ('owner', 'vet', 'staff')`),
  ],
);

/**
 * Refresh tokens rotate: each is used once. `family_id` ties every token descended from one
 * login, so presenting a used token revokes the whole family. Only the SHA-256 is stored.
 */
export const refreshTokens = pgTable(
  "refresh_tokens",
  {
    id: uuid("id").primaryKey(),
    family_id: uuid("family_id").notNull(),
    user_id: uuid("user_id")
      .notNull()
      .references(() => users.id),
    clinic_id: uuid("clinic_id").notNull(),
    token_hash: text("token_hash").notNull(),
    expires_at: timestampColumn("expires_at").notNull(),
    used_at: timestampColumn("used_at"),
    revoked_at: timestampColumn("revoked_at"),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("refresh_tokens_hash_key").on(t.token_hash),
    index("refresh_tokens_family_idx").on(t.family_id),
  ],
);
