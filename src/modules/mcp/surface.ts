import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { toolJsonSchema } from "../../http/json-schema";
import { AppError } from "../../lib/errors";
import type { KeyPrincipal } from "../mcp-keys/directory";
import { validateInput, type RegisteredTool } from "./registry";
import type { McpRuntime } from "./runtime";
import { READABLE_TABLES } from "./sql-guard/readable-tables";
import { REPORT_TOOL_PREFIX } from "./tools/saved-report";

/**
 * What `initialize` declares: exactly the handlers below (and tools, set by the caller). No
 * logging: the endpoint is stateless with JSON answers, so there is no channel on which a log
 * notification could reach the client.
 */
export const SURFACE_CAPABILITIES = { resources: { listChanged: false }, prompts: { listChanged: false }, completions: {} };

const SCHEMA_URI = "clinic://schema";
const TABLE_URI = "clinic://schema/tables/";
const REPORT_URI = "clinic://reports/";
const PATIENT_URI = "clinic://patients/";
const TIMELINE_SUFFIX = "/timeline";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** A starter analysis: which tools to use, in the words an assistant follows, with the query to start from. */
export interface StarterPrompt {
  name: string;
  title: string;
  description: string;
  scope: "query" | "clinic_context";
  arguments: { name: string; description: string; required: boolean }[];
  /** Refuses arguments the prompt cannot be built from (they are written into SQL). */
  check(args: Record<string, string>): string | undefined;
  /** The query the prompt asks the assistant to run first, in the clinic's time zone. */
  sql(args: Record<string, string>, timezone: string): string;
  text(args: Record<string, string>, sql: string): string;
}

/** A time zone name as SQL text: IANA names only (letters, digits, `/`, `_`, `+`, `-`). */
const zone = (timezone: string) => `'${timezone.replace(/[^A-Za-z0-9/_+-]/g, "")}'`;

export const STARTER_PROMPTS: StarterPrompt[] = [
  {
    name: "monthly_revenue_review",
    title: "Review a month's revenue",
    description: "Invoiced, paid and unpaid amounts of a month by day and by service, against the month before",
    scope: "query",
    arguments: [{ name: "month", description: "The month, as YYYY-MM", required: true }],
    check: ({ month }) => (MONTH.test(month ?? "") ? undefined : "month must be YYYY-MM"),
    sql: ({ month }, timezone) =>
      `SELECT (i.emitted_at AT TIME ZONE ${zone(timezone)})::date AS day, count(*) AS invoices, sum(i.total_amount) AS invoiced, sum(i.paid_amount) AS paid, sum(i.total_amount - i.paid_amount) AS unpaid
FROM invoices i
WHERE i.emitted_at IS NOT NULL AND i.voided_at IS NULL
  AND i.emitted_at >= (TIMESTAMP '${month}-01' AT TIME ZONE ${zone(timezone)})
  AND i.emitted_at < ((TIMESTAMP '${month}-01' + INTERVAL '1 month') AT TIME ZONE ${zone(timezone)})
GROUP BY day ORDER BY day`,
    text: ({ month }, sql) =>
      `Review the clinic's revenue for ${month}. Call get_clinic_context for the currency, then query_database with this query (invoices by day, in the clinic's time zone):\n\n\`\`\`sql\n${sql}\n\`\`\`\n\nThen total invoice_items.total_amount by description for the same invoices (join invoice_items.invoice_id = invoices.id) to see the services, and run the first query for the month before to compare. Money columns are integers in the smallest currency unit. Summarize the trend, the largest changes and the unpaid balances.`,
  },
  {
    name: "vaccines_due",
    title: "Vaccines due",
    description: "Patients whose vaccines are overdue or fall due in the coming weeks, with the tutor to call",
    scope: "query",
    arguments: [{ name: "weeks", description: "How many weeks ahead, 1 to 52 (default 4)", required: false }],
    check: ({ weeks }) => (weeks === undefined || weeks === "" || (/^\d{1,2}$/.test(weeks) && Number(weeks) >= 1 && Number(weeks) <= 52) ? undefined : "weeks must be a whole number from 1 to 52"),
    sql: ({ weeks }, timezone) =>
      `SELECT v.next_due_on, v.vaccine, v.reminder_status, p.name AS patient, p.species, t.name AS tutor, t.phone
FROM vaccinations v JOIN patients p ON p.id = v.patient_id JOIN tutors t ON t.id = p.tutor_id
WHERE v.next_due_on IS NOT NULL AND v.due_closed_at IS NULL
  AND v.next_due_on < (now() AT TIME ZONE ${zone(timezone)})::date + ${Number(weeks || "4") * 7}
ORDER BY v.next_due_on, p.name`,
    text: ({ weeks }, sql) =>
      `List the patients whose vaccines are overdue or fall due in the next ${weeks || "4"} weeks. Run this with query_database (a due date is open until a later dose closes it, due_closed_at):\n\n\`\`\`sql\n${sql}\n\`\`\`\n\nGroup the answer by week (overdue first), with each tutor's phone and the reminder status, so reception can call them.`,
  },
  {
    name: "no_shows",
    title: "No-shows",
    description: "Appointments missed in a period, by tutor, weekday and hour",
    scope: "query",
    arguments: [
      { name: "from", description: "First day, YYYY-MM-DD", required: true },
      { name: "to", description: "Last day, YYYY-MM-DD", required: true },
    ],
    check: ({ from, to }) => (DAY.test(from ?? "") && DAY.test(to ?? "") ? (from! <= to! ? undefined : "from must not be after to") : "from and to must be YYYY-MM-DD"),
    sql: ({ from, to }, timezone) =>
      `SELECT t.name AS tutor, t.phone, count(*) AS no_shows, min(v.scheduled_at) AS first_missed, max(v.scheduled_at) AS last_missed
FROM visits v JOIN patients p ON p.id = v.patient_id JOIN tutors t ON t.id = p.tutor_id
WHERE v.status = 'no_show'
  AND v.scheduled_at >= (TIMESTAMP '${from}' AT TIME ZONE ${zone(timezone)})
  AND v.scheduled_at < ((TIMESTAMP '${to}' + INTERVAL '1 day') AT TIME ZONE ${zone(timezone)})
GROUP BY t.id, t.name, t.phone ORDER BY no_shows DESC, tutor`,
    text: ({ from, to }, sql) =>
      `Find the missed appointments (visits with status no_show) from ${from} to ${to}. Start with this query_database query, by tutor:\n\n\`\`\`sql\n${sql}\n\`\`\`\n\nThen count the same visits by weekday and by hour of scheduled_at in the clinic's time zone (extract(isodow …), extract(hour …) of scheduled_at AT TIME ZONE the clinic's zone). Point out tutors who missed more than once.`,
  },
];

/**
 * A saved report's prompt arguments arrive as text (MCP prompt arguments are strings): each is
 * turned into the type the report's input schema declares, then the whole is validated as the
 * tool call would be, so the prompt hands the model arguments the tool accepts.
 */
export function typedReportArguments(tool: RegisteredTool, args: Record<string, string>): Record<string, unknown> {
  const schema = toolJsonSchema(tool.inputSchema) as { properties?: Record<string, { type?: string; anyOf?: unknown[]; enum?: unknown[] }> };
  const typed: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(args)) {
    const type = schema.properties?.[name]?.type;
    if (type === "integer" || type === "number") {
      const value = raw.trim() === "" ? Number.NaN : Number(raw);
      typed[name] = Number.isFinite(value) ? value : raw;
    } else if (type === "boolean") typed[name] = raw === "true" ? true : raw === "false" ? false : raw;
    else typed[name] = raw;
  }
  try {
    validateInput(tool, typed);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const fields = (error.details?.fields as { path: string; message: string }[] | undefined) ?? [];
    throw new McpError(ErrorCode.InvalidParams, `${error.message}${fields.length ? `: ${fields.map((field) => `${field.path.replace(/^body\./, "")} ${field.message}`).join("; ")}` : ""}`);
  }
  return typed;
}

/** A patient's history through the MCP reader (its row-level security pins the clinic), newest first. */
function timelineSql(patientId: string): string {
  const where = `patient_id = '${patientId}'`;
  return `SELECT 'visit' AS kind, id, scheduled_at AS at, concat_ws(': ', status, reason) AS summary FROM visits WHERE ${where}
UNION ALL SELECT 'vitals', id, measured_at, concat_ws(', ', weight_grams || ' g', (temperature_dc / 10.0) || ' °C', 'HR ' || heart_rate_bpm) FROM vitals WHERE ${where}
UNION ALL SELECT 'vaccination', id, coalesce(given_at, next_due_on::timestamptz), concat_ws(' ', vaccine, '(next due ' || next_due_on || ')') FROM vaccinations WHERE ${where}
UNION ALL SELECT 'prescription', id, created_at, concat_ws(' ', drug, dose, route, frequency) FROM prescriptions WHERE ${where}
UNION ALL SELECT 'note', id, signed_at, concat_ws(': ', 'signed note', assessment) FROM clinical_notes WHERE ${where}
ORDER BY at DESC, id LIMIT 200`;
}

/** Resource templates (RFC 6570 level 1), each with the scope that may read what it names. */
const RESOURCE_TEMPLATES = [
  {
    uriTemplate: `${PATIENT_URI}{patient_id}${TIMELINE_SUFFIX}`,
    name: "patient_timeline",
    title: "A patient's timeline",
    description: "A patient's visits, vitals, vaccinations, prescriptions and signed notes, newest first (a patient id from patients.id)",
    mimeType: "application/json",
    scope: "query",
  },
  {
    uriTemplate: `${TABLE_URI}{table}`,
    name: "table_schema",
    title: "A table's columns",
    description: "One readable table's columns and their meaning, by name",
    mimeType: "application/json",
    scope: "read",
  },
  {
    uriTemplate: `${REPORT_URI}{report}`,
    name: "saved_report",
    title: "A saved report's arguments",
    description: "A saved report's input and output schema, by name (without the report_ prefix)",
    mimeType: "application/json",
    scope: "read",
  },
] as const;

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** A saved report as a resource: the tool's schema, as `tools/list` describes it. */
function reportResource(tool: RegisteredTool) {
  return { name: tool.name, title: tool.title, description: tool.description, scope: tool.scope, input_schema: toolJsonSchema(tool.inputSchema), output_schema: toolJsonSchema(tool.outputSchema) };
}

/** The enum values a saved report's argument takes, if it declares them. */
function enumValues(tool: RegisteredTool, argument: string): string[] {
  const schema = toolJsonSchema(tool.inputSchema) as { properties?: Record<string, { enum?: unknown[]; anyOf?: { enum?: unknown[]; const?: unknown }[] }> };
  const property = schema.properties?.[argument];
  const values = property?.enum ?? property?.anyOf?.flatMap((branch) => branch.enum ?? ("const" in branch ? [branch.const] : [])) ?? [];
  return values.map(String);
}

/**
 * Resources (the schema `describe_schema` gives, per table, and each saved report's), prompts
 * (starter analyses, and each saved report with its arguments), logging levels and completion of
 * saved reports' enum arguments, each within the caller's scopes.
 */
export function registerSurface(server: Server, runtime: McpRuntime, key: KeyPrincipal): void {
  const may = (scope: string) => key.scopes.includes(scope as never);
  const reports = async () => (await runtime.reports.forClinic(key.clinicId)).filter((tool) => may(tool.scope));
  const describeSchema = runtime.registry.get("describe_schema")!;
  const queryDatabase = runtime.registry.get("query_database")!;
  const toolContext = { database: runtime.deps.database, clock: runtime.deps.clock, config: runtime.deps.config, sql: runtime.sql, key };
  const schemaText = async () => (await describeSchema.run(toolContext, {})).result;

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const resources = [];
    if (may(describeSchema.scope)) {
      resources.push({ uri: SCHEMA_URI, name: "schema", title: "Readable tables, functions and rules", description: describeSchema.description, mimeType: "application/json" });
      for (const table of READABLE_TABLES) resources.push({ uri: `${TABLE_URI}${table.name}`, name: table.name, title: `Table ${table.name}`, description: table.description, mimeType: "application/json" });
    }
    for (const tool of await reports()) resources.push({ uri: `${REPORT_URI}${tool.name.slice(REPORT_TOOL_PREFIX.length)}`, name: tool.name, title: tool.title, description: tool.description, mimeType: "application/json" });
    return { resources };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: RESOURCE_TEMPLATES.filter((template) => may(template.scope)).map(({ scope: _scope, ...template }) => template),
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async ({ params: { uri } }) => {
    const text = async (): Promise<string | undefined> => {
      if (uri === SCHEMA_URI && may(describeSchema.scope)) return json(await schemaText());
      if (uri.startsWith(TABLE_URI) && may(describeSchema.scope)) {
        const table = READABLE_TABLES.find((candidate) => candidate.name === uri.slice(TABLE_URI.length));
        return table && json(table);
      }
      if (uri.startsWith(REPORT_URI)) {
        const tool = await runtime.reports.find(key.clinicId, `${REPORT_TOOL_PREFIX}${uri.slice(REPORT_URI.length)}`);
        return tool && may(tool.scope) ? json(reportResource(tool)) : undefined;
      }
      if (uri.startsWith(PATIENT_URI) && uri.endsWith(TIMELINE_SUFFIX) && may(queryDatabase.scope)) {
        const patientId = uri.slice(PATIENT_URI.length, -TIMELINE_SUFFIX.length);
        if (!UUID.test(patientId)) return undefined;
        const found = (await queryDatabase.run(toolContext, { sql: `SELECT id, name, species FROM patients WHERE id = '${patientId}'` })).result as { rows: Record<string, unknown>[] };
        if (!found.rows.length) return undefined;
        const timeline = (await queryDatabase.run(toolContext, { sql: timelineSql(patientId) })).result as { rows: Record<string, unknown>[] };
        return json({ patient: found.rows[0], entries: timeline.rows });
      }
      return undefined;
    };
    const found = await text();
    if (found === undefined) throw new McpError(-32002, `Resource not found: ${uri}`);
    return { contents: [{ uri, mimeType: "application/json", text: found }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      ...STARTER_PROMPTS.filter((prompt) => may(prompt.scope)).map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args })),
      ...(await reports()).map((tool) => {
        const schema = toolJsonSchema(tool.inputSchema) as { properties?: Record<string, { description?: string; type?: string }>; required?: string[] };
        return {
          name: tool.name,
          title: tool.title,
          description: `Run the saved report ${tool.title}`,
          arguments: Object.entries(schema.properties ?? {}).map(([name, property]) => ({
            name,
            description: `${property.description ?? name}${property.type ? ` (${property.type})` : ""}`,
            required: (schema.required ?? []).includes(name),
          })),
        };
      }),
    ],
  }));

  server.setRequestHandler(GetPromptRequestSchema, async ({ params }) => {
    const args = (params.arguments ?? {}) as Record<string, string>;
    const starter = STARTER_PROMPTS.find((prompt) => prompt.name === params.name && may(prompt.scope));
    if (starter) {
      const missing = starter.arguments.filter((arg) => arg.required && !args[arg.name]).map((arg) => arg.name);
      if (missing.length) throw new McpError(ErrorCode.InvalidParams, `Missing arguments: ${missing.join(", ")}`);
      const problem = starter.check(args);
      if (problem) throw new McpError(ErrorCode.InvalidParams, problem);
      const sql = starter.sql(args, key.clinicTimezone);
      return { description: starter.description, messages: [{ role: "user", content: { type: "text", text: starter.text(args, sql) } }] };
    }
    const tool = (await reports()).find((candidate) => candidate.name === params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `There is no prompt named ${params.name}`);
    const typed = typedReportArguments(tool, args);
    return {
      description: tool.description,
      messages: [{ role: "user", content: { type: "text", text: `Call the tool ${tool.name} with these arguments: ${JSON.stringify(typed)}, then summarize its rows.` } }],
    };
  });

  server.setRequestHandler(CompleteRequestSchema, async ({ params }) => {
    const none = { completion: { values: [] as string[], hasMore: false } };
    const typed = params.argument.value.toLowerCase();
    const answer = (candidates: string[]) => {
      const values = candidates.filter((value) => value.toLowerCase().startsWith(typed));
      return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
    };
    if (params.ref.type === "ref/resource") {
      const uri = (params.ref as { uri: string }).uri;
      if (uri === `${TABLE_URI}{table}` && may(describeSchema.scope)) return answer(READABLE_TABLES.map((table) => table.name));
      if (uri === `${REPORT_URI}{report}`) return answer((await reports()).map((tool) => tool.name.slice(REPORT_TOOL_PREFIX.length)));
      return none;
    }
    if (params.ref.type !== "ref/prompt") return none;
    const tool = (await reports()).find((candidate) => candidate.name === (params.ref as { name: string }).name);
    if (!tool) return none;
    return answer(enumValues(tool, params.argument.name));
  });
}
