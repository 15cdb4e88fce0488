import { TypeCompiler } from "@sinclair/typebox/compiler";
import { and, eq } from "drizzle-orm";
import { isUniqueViolation, type Database, type ServiceContext } from "../../db/client";
import { changedSince, changesKeyset, pageOf } from "../../db/clinic-records";
import { mcpReports, type ReportParameter } from "../../db/schema";
import { keyset, type PageRequest } from "../../db/keyset";
import { newId } from "../../lib/crypto";
import { AppError, type FieldError } from "../../lib/errors";
import { serialize } from "../../lib/time";
import { planGuarded, type QueryLimits } from "../mcp/sql-guard/execute";
import { guardReport, parameterSchema, REPORT_TOOL_PREFIX, type ReportRow } from "../mcp/tools/saved-report";
import type { CreateReportInput, UpdateReportInput } from "./model";

/** Reports are planned by the database they will run on, under the limits they will run with. */
export interface ReportServiceContext extends ServiceContext {
  database: Database;
  queryLimits: QueryLimits;
}

export function reportView(row: ReportRow) {
  return serialize({
    id: row.id,
    name: row.name,
    tool_name: `${REPORT_TOOL_PREFIX}${row.name}`,
    title: row.title,
    description: row.description,
    sql: row.sql,
    parameters: row.parameters,
    scope: row.scope,
    log_arguments: row.log_arguments,
    version: row.version,
    checked_sql: row.checked_sql,
    created_at: row.created_at,
    updated_at: row.updated_at,
  });
}

const NUMERIC_TYPES: ReadonlySet<string> = new Set(["integer", "number"]);

/** A declaration's own consistency: bounds, enum and default fit its type. */
function parameterProblems(parameter: ReportParameter, index: number): FieldError[] {
  const at = (field: string) => `body.parameters.${index}.${field}`;
  const problems: FieldError[] = [];
  const bounded = NUMERIC_TYPES.has(parameter.type) || parameter.type === "string";
  for (const bound of ["min", "max"] as const) {
    const value = parameter[bound];
    if (value === undefined) continue;
    if (!bounded) problems.push({ path: at(bound), message: "min and max apply to integer, number and string parameters" });
    else if (parameter.type !== "number" && (!Number.isSafeInteger(value) || (parameter.type === "string" && value < 0))) {
      problems.push({ path: at(bound), message: parameter.type === "string" ? "Must be a length: a non-negative integer" : "Must be an integer" });
    }
  }
  if (parameter.min !== undefined && parameter.max !== undefined && parameter.min > parameter.max) problems.push({ path: at("max"), message: "Must not be below min" });
  if (parameter.enum) {
    if (!NUMERIC_TYPES.has(parameter.type) && parameter.type !== "string") problems.push({ path: at("enum"), message: "enum applies to string, integer and number parameters" });
    else {
      const plain = TypeCompiler.Compile(parameterSchema({ ...parameter, enum: undefined, default: undefined }));
      parameter.enum.forEach((value, i) => {
        if (!plain.Check(value)) problems.push({ path: `${at("enum")}.${i}`, message: `Must be a valid ${parameter.type} value for this parameter` });
      });
    }
  }
  if (parameter.default !== undefined) {
    if (parameter.required) problems.push({ path: at("default"), message: "A required parameter takes no default" });
    else if (problems.length === 0 && !TypeCompiler.Compile(parameterSchema({ ...parameter, default: undefined })).Check(parameter.default)) {
      problems.push({ path: at("default"), message: `Must be a valid ${parameter.type} value for this parameter` });
    }
  }
  return problems;
}

type Definition = Pick<ReportRow, "sql" | "parameters">;

/**
 * Checks a definition as it will run: the declarations, then the guard (the same refusals as
 * query_database), then placeholders against declarations, then PostgreSQL's plan of the
 * statement with every argument NULL (unknown columns, type mismatches). Returns the checked SQL.
 */
async function checkDefinition(ctx: ReportServiceContext, clinicId: string, definition: Definition): Promise<string> {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  definition.parameters.forEach((parameter, index) => {
    if (seen.has(parameter.name)) problems.push({ path: `body.parameters.${index}.name`, message: `${parameter.name} is declared twice` });
    seen.add(parameter.name);
    problems.push(...parameterProblems(parameter, index));
  });
  if (problems.length) throw AppError.validation(problems, "The report's parameters are not valid");

  const guarded = guardReport(definition);
  if (!guarded.ok) throw new AppError("SQL_GUARD_BLOCKED", guarded.message, { reason: guarded.reason });
  const used = new Set(guarded.parameters);
  for (const name of used) if (!seen.has(name)) problems.push({ path: "body.sql", message: `The placeholder :${name} is not declared in parameters` });
  definition.parameters.forEach((parameter, index) => {
    if (!used.has(parameter.name)) problems.push({ path: `body.parameters.${index}.name`, message: `${parameter.name} is declared but the SQL never uses :${parameter.name}` });
  });
  if (problems.length) throw AppError.validation(problems, "The report's placeholders and parameters do not match");

  const nulls = (guarded.parameters ?? []).map(() => null);
  try {
    await planGuarded(ctx.database, clinicId, guarded.sql, guarded.bindsClinic, nulls, ctx.queryLimits);
  } catch (error) {
    if (error instanceof AppError && error.code === "QUERY_FAILED") throw AppError.validation([{ path: "body.sql", message: error.message }], "PostgreSQL refused the report's SQL");
    throw error;
  }
  return guarded.sql;
}

/** Declarations as stored: defaults filled in, absent optional fields left out. */
const normalized = (parameters: CreateReportInput["parameters"] = []): ReportParameter[] =>
  parameters.map((p) => ({ ...p, description: p.description ?? "", required: p.required ?? false }));

async function findReport(ctx: ReportServiceContext, clinicId: string, id: string): Promise<ReportRow> {
  const [row] = await ctx.db.select().from(mcpReports).where(and(eq(mcpReports.clinic_id, clinicId), eq(mcpReports.id, id)));
  if (!row) throw AppError.notFound("Report", id);
  return row;
}

const nameTaken = (name: string) => new AppError("CONFLICT", `The clinic already has a report named ${name}`, { name });

export async function createReport(ctx: ReportServiceContext, clinicId: string, userId: string | null, input: CreateReportInput) {
  const parameters = normalized(input.parameters);
  const checkedSql = await checkDefinition(ctx, clinicId, { sql: input.sql, parameters });
  const now = ctx.clock.now();
  try {
    const [row] = await ctx.db
      .insert(mcpReports)
      .values({
        id: newId(),
        clinic_id: clinicId,
        name: input.name,
        title: input.title.trim(),
        description: (input.description ?? "").trim(),
        sql: input.sql,
        parameters,
        scope: input.scope ?? "read",
        log_arguments: input.log_arguments ?? false,
        version: 1,
        checked_sql: checkedSql,
        created_by: userId,
        created_at: now,
        updated_at: now,
      })
      .returning();
    return reportView(row!);
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(input.name);
    throw error;
  }
}

export const REPORT_KEYSET = keyset<ReportRow>("mcp_reports", [mcpReports.created_at, mcpReports.id]);

/** Delta sync: reports created or edited after `since` (a deleted report is gone: its `mcp_report.deleted` event says so). */
export const REPORT_CHANGES = changesKeyset<ReportRow>(mcpReports);
export const reportChanges = (ctx: ReportServiceContext, clinicId: string, since: Date, page: PageRequest) => changedSince<ReportRow>(ctx.db, mcpReports, clinicId, since, page, REPORT_CHANGES);

export const listReports = (ctx: ReportServiceContext, clinicId: string, page: PageRequest) =>
  pageOf(ctx.db, mcpReports, [eq(mcpReports.clinic_id, clinicId)], page, REPORT_KEYSET);

export async function getReport(ctx: ReportServiceContext, clinicId: string, id: string) {
  return reportView(await findReport(ctx, clinicId, id));
}

/** Any change is checked as a whole definition and bumps the version; the next call uses it. */
export async function updateReport(ctx: ReportServiceContext, clinicId: string, id: string, patch: UpdateReportInput) {
  const current = await findReport(ctx, clinicId, id);
  const parameters = patch.parameters ? normalized(patch.parameters) : current.parameters;
  const sql = patch.sql ?? current.sql;
  const checkedSql = await checkDefinition(ctx, clinicId, { sql, parameters });
  try {
    const [row] = await ctx.db
      .update(mcpReports)
      // Fields the patch leaves undefined are not set (Drizzle leaves them out of the UPDATE).
      .set({
        ...patch,
        title: patch.title?.trim(),
        description: patch.description?.trim(),
        sql,
        parameters,
        checked_sql: checkedSql,
        version: current.version + 1,
        updated_at: ctx.clock.now(),
      })
      .where(and(eq(mcpReports.clinic_id, clinicId), eq(mcpReports.id, id), eq(mcpReports.version, current.version)))
      .returning();
    if (!row) throw new AppError("CONFLICT", "The report changed while this update was checked; read it again and retry");
    return reportView(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(patch.name ?? current.name);
    throw error;
  }
}

export async function deleteReport(ctx: ReportServiceContext, clinicId: string, id: string): Promise<void> {
  const deleted = await ctx.db.delete(mcpReports).where(and(eq(mcpReports.clinic_id, clinicId), eq(mcpReports.id, id))).returning({ id: mcpReports.id });
  if (!deleted.length) throw AppError.notFound("Report", id);
}
