import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { toolJsonSchema } from "../../http/json-schema";
import type { KeyPrincipal } from "../mcp-keys/directory";
import type { RegisteredTool } from "./registry";
import type { McpRuntime } from "./runtime";
import { READABLE_TABLES } from "./sql-guard/readable-tables";
import { REPORT_TOOL_PREFIX } from "./tools/saved-report";

/** What `initialize` declares: exactly the handlers below (and tools, set by the caller). */
export const SURFACE_CAPABILITIES = { resources: { listChanged: false }, prompts: { listChanged: false }, logging: {}, completions: {} };

const SCHEMA_URI = "clinic://schema";
const TABLE_URI = "clinic://schema/tables/";
const REPORT_URI = "clinic://reports/";

/** A starter analysis: which tools to use, in the words an assistant follows. */
interface StarterPrompt {
  name: string;
  title: string;
  description: string;
  scope: "query" | "clinic_context";
  arguments: { name: string; description: string; required: boolean }[];
  text: (args: Record<string, string>) => string;
}

const STARTER_PROMPTS: StarterPrompt[] = [
  {
    name: "monthly_revenue_review",
    title: "Review a month's revenue",
    description: "Revenue of a month by day, service and payment state, against the month before",
    scope: "query",
    arguments: [{ name: "month", description: "The month, as YYYY-MM", required: true }],
    text: ({ month }) =>
      `Review the clinic's revenue for ${month}. First call get_clinic_context for the clinic's time zone and currency, and describe_schema for the invoice tables. Then use query_database to total invoiced and paid amounts for ${month} by day (in the clinic's time zone) and by service, and compare with the month before. Money columns are integers in the smallest currency unit. Summarize the trend, the largest changes and unpaid balances.`,
  },
  {
    name: "vaccines_due",
    title: "Vaccines due",
    description: "Patients whose vaccines fall due in the coming weeks, to call their tutors",
    scope: "query",
    arguments: [{ name: "weeks", description: "How many weeks ahead (default 4)", required: false }],
    text: ({ weeks }) =>
      `List the patients whose vaccines fall due in the next ${weeks || "4"} weeks. Call get_clinic_context for today's date in the clinic's time zone and describe_schema, then query_database on the active alerts of kind vaccine_due by due_date, with the patient's and tutor's names and the tutor's phone. Order by due date and group by week.`,
  },
  {
    name: "no_shows",
    title: "No-shows",
    description: "Appointments missed in a period, by patient, tutor and weekday",
    scope: "query",
    arguments: [
      { name: "from", description: "First day, YYYY-MM-DD", required: true },
      { name: "to", description: "Last day, YYYY-MM-DD", required: true },
    ],
    text: ({ from, to }) =>
      `Find the missed appointments (no-shows) from ${from} to ${to}. Call get_clinic_context for the time zone and describe_schema, then query_database on visits with status no_show (by scheduled_at) to count them by tutor, by weekday and by hour (in the clinic's time zone). Point out tutors who missed more than once.`,
  },
];

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
  const schemaText = async () => (await describeSchema.run({ database: runtime.deps.database, clock: runtime.deps.clock, config: runtime.deps.config, sql: runtime.sql, key }, {})).result;

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const resources = [];
    if (may(describeSchema.scope)) {
      resources.push({ uri: SCHEMA_URI, name: "schema", title: "Readable tables, functions and rules", description: describeSchema.description, mimeType: "application/json" });
      for (const table of READABLE_TABLES) resources.push({ uri: `${TABLE_URI}${table.name}`, name: table.name, title: `Table ${table.name}`, description: table.description, mimeType: "application/json" });
    }
    for (const tool of await reports()) resources.push({ uri: `${REPORT_URI}${tool.name.slice(REPORT_TOOL_PREFIX.length)}`, name: tool.name, title: tool.title, description: tool.description, mimeType: "application/json" });
    return { resources };
  });

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
      return undefined;
    };
    const found = await text();
    if (found === undefined) throw new McpError(-32002, `Resource not found: ${uri}`);
    return { contents: [{ uri, mimeType: "application/json", text: found }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      ...STARTER_PROMPTS.filter((prompt) => may(prompt.scope)).map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args })),
      ...(await reports()).map((tool) => ({
        name: tool.name,
        title: tool.title,
        description: `Run the saved report ${tool.title}`,
        arguments: Object.entries((toolJsonSchema(tool.inputSchema) as { properties?: Record<string, { description?: string }>; required?: string[] }).properties ?? {}).map(([name, property]) => ({
          name,
          description: property.description ?? name,
          required: ((toolJsonSchema(tool.inputSchema) as { required?: string[] }).required ?? []).includes(name),
        })),
      })),
    ],
  }));

  server.setRequestHandler(GetPromptRequestSchema, async ({ params }) => {
    const args = (params.arguments ?? {}) as Record<string, string>;
    const starter = STARTER_PROMPTS.find((prompt) => prompt.name === params.name && may(prompt.scope));
    if (starter) {
      const missing = starter.arguments.filter((arg) => arg.required && !args[arg.name]).map((arg) => arg.name);
      if (missing.length) throw new McpError(ErrorCode.InvalidParams, `Missing arguments: ${missing.join(", ")}`);
      return { description: starter.description, messages: [{ role: "user", content: { type: "text", text: starter.text(args) } }] };
    }
    const tool = (await reports()).find((candidate) => candidate.name === params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `There is no prompt named ${params.name}`);
    return {
      description: tool.description,
      messages: [{ role: "user", content: { type: "text", text: `Call the tool ${tool.name} with these arguments: ${JSON.stringify(args)}, then summarize its rows.` } }],
    };
  });

  // Accepted: the server sends no log notifications (it is stateless), so every level is honoured.
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));

  server.setRequestHandler(CompleteRequestSchema, async ({ params }) => {
    const none = { completion: { values: [] as string[], hasMore: false } };
    if (params.ref.type !== "ref/prompt") return none;
    const tool = (await reports()).find((candidate) => candidate.name === (params.ref as { name: string }).name);
    if (!tool) return none;
    const typed = params.argument.value.toLowerCase();
    const values = enumValues(tool, params.argument.name).filter((value) => value.toLowerCase().startsWith(typed));
    return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
  });
}
