import { t } from "elysia";
import { FUNCTION_GROUPS } from "../sql-guard/functions";
import { MAX_SQL_LENGTH } from "../sql-guard/guard";
import { READABLE_TABLES } from "../sql-guard/readable-tables";
import type { ToolDefinition } from "../registry";

const DescribeSchemaResult = t.Object({
  tables: t.Array(
    t.Object({
      name: t.String(),
      description: t.String(),
      columns: t.Array(t.Object({ name: t.String(), type: t.String(), description: t.String() })),
    }),
  ),
  functions: t.Record(t.String(), t.Object({ reason: t.String(), names: t.Array(t.String()) })),
  dialect: t.String({ description: "The SQL dialect query_database reads" }),
  limits: t.Object({ max_rows: t.Integer(), timeout_ms: t.Integer(), max_sql_length: t.Integer() }),
  rules: t.Array(t.String(), { description: "What the guard accepts and refuses, with what to write instead" }),
});

/** Said once, so an assistant writes accepted SQL the first time. */
const RULES = [
  "Exactly one SELECT (WITH, VALUES, UNION/INTERSECT/EXCEPT included); no writes, DDL, SET, COPY, transactions or locks.",
  "Only the tables listed here, by their plain names (no schema prefix); each holds this clinic's live rows only.",
  "Only the functions listed here, by group; casts only to plain data types (integer, numeric, text, boolean, date, timestamptz, interval, uuid, json…), written 'value'::type, CAST(value AS type) or as typed literals (timestamptz '2026-01-01').",
  "Ordered-set aggregates use WITHIN GROUP: percentile_cont(0.5) WITHIN GROUP (ORDER BY total_amount) is the median.",
  "Write values inline (no $1 parameters); no recursive CTEs, no FOR UPDATE, no SELECT INTO.",
  "Money columns are integers in the smallest currency unit; timestamps are timestamptz (UTC); group by the clinic's day with (ts AT TIME ZONE '<clinic time zone>')::date.",
];

/** Exactly what the guard lets through, from the same definitions the guard uses. */
export const describeSchemaTool = (): ToolDefinition => ({
  name: "describe_schema",
  title: "Describe readable tables",
  description: "The tables and columns query_database can read (this clinic's live rows only), the SQL functions it allows by group, its limits (row cap, timeout) and its rules. The dialect is PostgreSQL.",
  scope: "read",
  inputSchema: t.Object({}, { additionalProperties: false }),
  outputSchema: DescribeSchemaResult,
  async run({ config }) {
    return {
      result: {
        tables: READABLE_TABLES,
        functions: FUNCTION_GROUPS,
        dialect: "PostgreSQL (15+)",
        limits: { max_rows: config.queryMaxRows, timeout_ms: config.queryTimeoutMs, max_sql_length: MAX_SQL_LENGTH },
        rules: RULES,
      },
    };
  },
});
