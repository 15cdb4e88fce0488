import { Type } from "@sinclair/typebox";
import { t, type TSchema } from "elysia";
import type { ReportParameter, ReportParameterType, mcpReports } from "../../../db/schema";
import { AppError } from "../../../lib/errors";
import { timestampProblem } from "../../../lib/time";
import type { SqlEngine } from "../sql-guard/engine";
import { guardSql, type GuardResult } from "../sql-guard/guard";
import type { ToolDefinition } from "../registry";
import { QueryResultSchema } from "./query-database";

export const REPORT_TOOL_PREFIX = "report_";
export type ReportRow = typeof mcpReports.$inferSelect;

const INT4_MIN = -2_147_483_648;
const INT4_MAX = 2_147_483_647;
const DEFAULT_STRING_MAX = 1000;

const SQL_TYPES: Record<ReportParameterType, string> = { string: "text", integer: "bigint", number: "numeric", boolean: "boolean", date: "date", timestamp: "timestamptz" };

/**
 * The PostgreSQL type a placeholder's value is cast to. An integer is `integer` when its declared
 * bounds fit in one (so date arithmetic and make_interval take it as is), otherwise `bigint`.
 */
export function sqlTypeOf({ type, min, max }: ReportParameter): string {
  if (type === "integer" && min !== undefined && max !== undefined && min >= INT4_MIN && max <= INT4_MAX) return "integer";
  return SQL_TYPES[type];
}

export const parameterTypes = (parameters: ReportParameter[]) => new Map(parameters.map((p) => [p.name, sqlTypeOf(p)]));

/** Runs the report's SQL through the guard with its placeholders typed (through an app's cache when given). */
export const guardReport = (report: Pick<ReportRow, "sql" | "parameters">, engine?: SqlEngine): GuardResult =>
  engine ? engine.guard(report.sql, parameterTypes(report.parameters)) : guardSql(report.sql, parameterTypes(report.parameters));

/** The JSON Schema of one argument, from its declaration: what clients see and what a call is checked against. */
export function parameterSchema(parameter: ReportParameter): TSchema {
  const annotations = {
    ...(parameter.description ? { description: parameter.description } : {}),
    ...(parameter.default !== undefined ? { default: parameter.default } : {}),
  };
  if (parameter.enum) {
    return t.Union(parameter.enum.map((value) => t.Literal(value)), annotations);
  }
  const bounds = (low: string, high: string) => ({
    ...(parameter.min !== undefined ? { [low]: parameter.min } : {}),
    ...(parameter.max !== undefined ? { [high]: parameter.max } : {}),
  });
  switch (parameter.type) {
    case "string":
      return t.String({ maxLength: DEFAULT_STRING_MAX, ...bounds("minLength", "maxLength"), ...annotations });
    case "integer":
      // TypeBox's own numbers: Elysia's t.Integer/t.Number would also take numeric strings.
      return Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, ...bounds("minimum", "maximum"), ...annotations });
    case "number":
      return Type.Number({ ...bounds("minimum", "maximum"), ...annotations });
    case "boolean":
      return t.Boolean(annotations);
    case "date":
      return t.String({ format: "date", ...annotations });
    case "timestamp":
      return t.String({ format: "date-time", ...annotations });
  }
}

export function reportInputSchema(parameters: ReportParameter[]): TSchema {
  const properties = Object.fromEntries(parameters.map((p) => [p.name, p.required ? parameterSchema(p) : t.Optional(parameterSchema(p))]));
  return t.Object(properties, { additionalProperties: false });
}

/** One argument as the text PostgreSQL reads for its cast; absent optional ones take their default, or NULL. */
function boundValue(parameter: ReportParameter, value: unknown): string | null {
  const given = value === undefined ? parameter.default : value;
  if (given === undefined || given === null) return null;
  if (parameter.type === "timestamp" && typeof given === "string" && !timestampProblem(given)) return new Date(given).toISOString();
  return String(given);
}

/** The usage log's text for a call: the report and its version, and the arguments only if the owner asked. */
function callText(report: ReportRow, input: unknown): string {
  const head = `report ${report.name} v${report.version}`;
  return report.log_arguments ? `${head} arguments ${JSON.stringify(input ?? {})}` : head;
}

/** A saved report as a tool: its arguments checked by the schema, bound (never spliced), run like query_database. */
export function reportTool(report: ReportRow): ToolDefinition {
  return {
    name: `${REPORT_TOOL_PREFIX}${report.name}`,
    title: report.title,
    description: `${report.title}${report.description ? `: ${report.description}` : ""} (a saved report of this clinic, version ${report.version})`,
    scope: report.scope,
    inputSchema: reportInputSchema(report.parameters),
    outputSchema: QueryResultSchema,
    logText: (input) => callText(report, input),
    async run({ sql, key }, input: Record<string, unknown>) {
      const guarded = guardReport(report, sql);
      if (!guarded.ok) throw new AppError("SQL_GUARD_BLOCKED", `The saved report no longer passes the guard: ${guarded.message}`, { reason: guarded.reason });
      const byName = new Map(report.parameters.map((p) => [p.name, p]));
      const values = (guarded.parameters ?? []).map((name) => boundValue(byName.get(name)!, input[name]));
      const result = await sql.run(key.clinicId, guarded, values);
      return { result: result as unknown as Record<string, unknown>, rowsReturned: result.row_count };
    },
  };
}
