import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { ApiKeyScope } from "../../db/schema";
import type { Clock } from "../../lib/clock";
import { readableMessage } from "../../http/errors";
import { undeclaredPropertiesError } from "../../http/input-rules";
import { undeclaredProperties, type ObjectShape } from "../../http/json-schema";
import { AppError, type FieldError } from "../../lib/errors";
import type { KeyPrincipal } from "../mcp-keys/directory";
import type { SqlEngine } from "./sql-guard/engine";

export interface ToolContext {
  database: Database;
  clock: Clock;
  config: Config;
  /** The app's guard and executor (their caches are the app's). */
  sql: SqlEngine;
  key: KeyPrincipal;
}

/** What a tool hands back: its result, plus what the usage log records. */
export interface ToolRun {
  result: Record<string, unknown>;
  rowsReturned?: number;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  scope: ApiKeyScope;
  inputSchema: TSchema;
  outputSchema: TSchema;
  /** What the usage log keeps of a call (query_database: its SQL; a report: its name and version). */
  logText?(input: unknown): string | null;
  run(context: ToolContext, input: any): Promise<ToolRun>;
}

export interface RegisteredTool extends ToolDefinition {
  check: TypeCheck<TSchema>;
}

/** A tool with its input check compiled once. */
export const registered = (tool: ToolDefinition): RegisteredTool => ({ ...tool, check: TypeCompiler.Compile(tool.inputSchema) });

/** Validates a tool's input; refusals are 422 with the fields named. */
export function validateInput(tool: RegisteredTool, input: unknown): void {
  if (tool.check.Check(input)) return;
  // An argument the tool does not take is named as the REST API names an undeclared body property.
  const undeclared = undeclaredProperties(tool.inputSchema as ObjectShape, input, "body");
  if (undeclared.length) throw undeclaredPropertiesError(undeclared, `argument for ${tool.name}`, `arguments for ${tool.name}`);
  const fields = new Map<string, FieldError>();
  for (const issue of tool.check.Errors(input)) {
    const path = issue.path ? `body${issue.path.replaceAll("/", ".")}` : "body";
    // The first refusal per field: a union's branches would each add their own.
    if (!fields.has(path)) fields.set(path, { path, message: readableMessage(issue.schema as Parameters<typeof readableMessage>[0], issue.value, issue.message) });
    if (fields.size === 20) break;
  }
  throw AppError.validation([...fields.values()], `Invalid input for ${tool.name}`);
}
