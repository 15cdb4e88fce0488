import { sql } from "drizzle-orm";
import { boolean, check, date, index, integer, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { recordColumns, timestampColumn } from "./columns";

export const API_KEY_SCOPES = ["read", "query", "clinic_context"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id").notNull(),
    name: text("name").notNull(),
    /** SHA-256 (hex) of the key value; the value itself is never stored. */
    key_hash: text("key_hash").notNull(),
    key_prefix: text("key_prefix").notNull(),
    scopes: text("scopes").array().$type<ApiKeyScope[]>().notNull(),
    rate_limit_per_day: integer("rate_limit_per_day").notNull().default(1000),
    expires_at: timestampColumn("expires_at"),
    last_used_at: timestampColumn("last_used_at"),
    revoked_at: timestampColumn("revoked_at"),
    created_by: uuid("created_by"),
    created_at: timestampColumn("created_at").notNull(),
    updated_at: timestampColumn("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("api_keys_hash_key").on(t.key_hash),
    index("api_keys_clinic_created_idx").on(t.clinic_id, t.created_at, t.id),
  ],
);

/**
 * Daily calls per principal (an API key) and UTC day. `count`: calls whose usage rows are
 * written (the two are written in one transaction, so they always agree); `held`: calls granted
 * to instances and not yet written, admitted or still to be. `count + held` never passes the
 * limit at the moment a grant is made.
 */
export const quotaCounters = pgTable(
  "quota_counters",
  {
    api_key_id: uuid("api_key_id").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    count: integer("count").notNull().default(0),
    held: integer("held").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.api_key_id, t.day] })],
);

export const USAGE_OUTCOMES = ["ok", "blocked", "error", "denied", "rate_limited"] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

export const mcpUsageLog = pgTable(
  "mcp_usage_log",
  {
    id: uuid("id").primaryKey(),
    clinic_id: uuid("clinic_id").notNull(),
    api_key_id: uuid("api_key_id").notNull(),
    tool: text("tool").notNull(),
    status_code: integer("status_code").notNull(),
    outcome: text("outcome").$type<UsageOutcome>().notNull(),
    reason: text("reason"),
    sql_text: text("sql_text"),
    rows_returned: integer("rows_returned"),
    duration_ms: integer("duration_ms").notNull(),
    request_id: text("request_id"),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [
    index("mcp_usage_log_clinic_created_idx").on(t.clinic_id, t.created_at, t.id),
    index("mcp_usage_log_key_created_idx").on(t.api_key_id, t.created_at),
    check(
      "mcp_usage_log_outcome_check",
      sql`${t.outcome} in ('ok', 'blocked', 'error', 'denied', 'rate_limited')`,
    ),
  ],
);

export const REPORT_PARAMETER_TYPES = ["string", "integer", "number", "boolean", "date", "timestamp"] as const;
export type ReportParameterType = (typeof REPORT_PARAMETER_TYPES)[number];

/** One declared argument of a saved report, as the owner wrote it. */
export interface ReportParameter {
  name: string;
  type: ReportParameterType;
  description: string;
  required: boolean;
  default?: string | number | boolean;
  enum?: (string | number)[];
  min?: number;
  max?: number;
}

/**
 * Saved reports: a clinic's named, parameterized SELECTs, each offered to MCP keys as the tool
 * `report_<name>`. `checked_sql` is the guard's verdict at the last save (the statement as it
 * runs); every call checks the source again.
 */
export const mcpReports = pgTable(
  "mcp_reports",
  {
    ...recordColumns(),
    name: text("name").notNull(),
    title: text("title").notNull(),
    description: text("description").notNull(),
    sql: text("sql").notNull(),
    parameters: jsonb("parameters").$type<ReportParameter[]>().notNull(),
    scope: text("scope").$type<ApiKeyScope>().notNull().default("read"),
    /** Whether the usage log keeps each call's argument values (off: only name and version). */
    log_arguments: boolean("log_arguments").notNull().default(false),
    version: integer("version").notNull().default(1),
    checked_sql: text("checked_sql").notNull(),
    created_by: uuid("created_by"),
  },
  (t) => [
    uniqueIndex("mcp_reports_clinic_name_key").on(t.clinic_id, t.name),
    index("mcp_reports_clinic_created_idx").on(t.clinic_id, t.created_at, t.id),
  ],
);
