import { t } from "elysia";
import { Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";
import { Scope } from "../mcp-keys/model";

/** snake_case; the tool is `report_<name>`, which stays within MCP's 64-character tool names. */
export const REPORT_NAME_PATTERN = "^[a-z][a-z0-9_]{0,55}$";
const PARAMETER_NAME_PATTERN = "^[a-z][a-z0-9_]{0,62}$";
export const MAX_REPORT_PARAMETERS = 20;

const ParameterType = t.Union([t.Literal("string"), t.Literal("integer"), t.Literal("number"), t.Literal("boolean"), t.Literal("date"), t.Literal("timestamp")]);
/** A default or enum value; its type is checked against the parameter's type by the service. */
const ParameterValue = t.Union([t.String({ maxLength: 1000 }), t.Number(), t.Boolean()]);

const parameterFields = {
  name: t.String({ pattern: PARAMETER_NAME_PATTERN, description: "Used as :name in the SQL" }),
  type: ParameterType,
  description: t.String({ maxLength: 500, description: "For the assistant: what the argument means (default empty)" }),
  required: t.Boolean({ description: "Default false: an absent argument takes `default`, or NULL" }),
};

/** What a parameter may add to its name and type: a default, allowed values, bounds. */
const parameterConstraints = {
  default: t.Optional(ParameterValue),
  enum: t.Optional(t.Array(t.Union([t.String({ maxLength: 1000 }), t.Number()]), { minItems: 1, maxItems: 100 })),
  min: t.Optional(t.Number({ description: "integer/number: the smallest value; string: the shortest length" })),
  max: t.Optional(t.Number({ description: "integer/number: the largest value; string: the longest length (default 1000)" })),
};

/** A parameter as sent: description and required may be left out. */
const ReportParameterInput = t.Object(
  {
    ...parameterFields,
    description: t.Optional(parameterFields.description),
    required: t.Optional(parameterFields.required),
    ...parameterConstraints,
  },
  { additionalProperties: false },
);

/**
 * A parameter as stored and shown: description and required always present. One object, not a
 * composite of the input and the required fields, whose shared keys would be published as
 * `allOf` of two identical schemas.
 */
export const ReportParameterModel = t.Object({ ...parameterFields, ...parameterConstraints });

const reportFields = {
  name: t.String({ pattern: REPORT_NAME_PATTERN, examples: ["daily_revenue"], description: "snake_case, unique in the clinic; the tool is report_<name>" }),
  title: t.String({ minLength: 1, maxLength: 200 }),
  description: t.String({ maxLength: 2000, default: "" }),
  sql: t.String({ minLength: 1, maxLength: 10_000, description: "One SELECT over the readable tables; :name placeholders are bound, never spliced" }),
  parameters: t.Array(ReportParameterInput, { maxItems: MAX_REPORT_PARAMETERS }),
  scope: Scope,
  log_arguments: t.Boolean({ description: "Keep each call's argument values in the usage log (default: only the report's name and version)" }),
};

export const CreateReportBody = t.Object(
  {
    name: reportFields.name,
    title: reportFields.title,
    description: t.Optional(reportFields.description),
    sql: reportFields.sql,
    parameters: t.Optional(reportFields.parameters),
    scope: t.Optional(reportFields.scope),
    log_arguments: t.Optional(reportFields.log_arguments),
  },
  { additionalProperties: false },
);

export const UpdateReportBody = t.Partial(t.Object({ ...reportFields }, { additionalProperties: false }), { minProperties: 1 });

export const ReportModel = t.Object({
  id: Uuid,
  name: t.String(),
  tool_name: t.String({ description: "The MCP tool: report_<name>" }),
  title: t.String(),
  description: t.String(),
  sql: t.String(),
  parameters: t.Array(ReportParameterModel),
  scope: t.String(),
  log_arguments: t.Boolean(),
  version: t.Integer({ description: "1 at creation, one more at every change" }),
  checked_sql: t.String({ description: "The statement as the guard rewrote it at the last save: what runs (clinic id as $1, arguments after it)" }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ReportTemplateModel = t.Object({
  name: t.String(),
  title: t.String(),
  description: t.String(),
  sql: t.String(),
  parameters: t.Array(ReportParameterModel),
  scope: Scope,
});

export const ReportListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });

export type CreateReportInput = typeof CreateReportBody.static;
export type UpdateReportInput = typeof UpdateReportBody.static;
export type ReportTemplate = typeof ReportTemplateModel.static;
export type ReportView = typeof ReportModel.static;
