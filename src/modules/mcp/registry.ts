import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { ApiKeyScope } from "../../db/schema";
import type { Clock } from "../../lib/clock";
import { AppError, type FieldError } from "../../lib/errors";
import type { KeyPrincipal } from "./api-keys";

export interface ToolContext {
  database: Database;
  clock: Clock;
  config: Config;
  key: KeyPrincipal;
}

/** What a tool hands back: its result, plus what the usage log records. */
export interface ToolRun {
  result: Record<string, unknown>;
  rowsReturned?: number;
  sqlText?: string;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  scope: ApiKeyScope;
  inputSchema: TSchema;
  outputSchema: TSchema;
  run(context: ToolContext, input: any): Promise<ToolRun>;
}

interface RegisteredTool extends ToolDefinition {
  check: TypeCheck<TSchema>;
}

/** The one list of tools, used by `/mcp/tools`, `/mcp/tools/{tool}/invoke` and `POST /mcp`. */
export class ToolRegistry {
  private readonly tools = new Map<string, RegisteredTool>();

  constructor(definitions: ToolDefinition[]) {
    for (const tool of definitions) this.tools.set(tool.name, { ...tool, check: TypeCompiler.Compile(tool.inputSchema) });
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }

  /**
   * The tools a key may call: what `tools/list` and `GET /mcp/tools` show it. Calling another
   * tool is still answered (403 INSUFFICIENT_SCOPE, counted), in the contract's order.
   */
  visibleTo(key: { scopes: readonly string[] }): ToolDefinition[] {
    return this.list().filter((tool) => key.scopes.includes(tool.scope));
  }

  /** Validates a tool's input; refusals are 422 with the fields named. */
  validate(tool: RegisteredTool, input: unknown): void {
    if (tool.check.Check(input)) return;
    const fields: FieldError[] = [...tool.check.Errors(input)].slice(0, 20).map((e) => ({
      path: e.path ? `body${e.path.replaceAll("/", ".")}` : "body",
      message: e.message,
    }));
    throw AppError.validation(fields, `Invalid input for ${tool.name}`);
  }
}
