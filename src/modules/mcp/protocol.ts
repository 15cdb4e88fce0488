import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { plainJsonSchema } from "../../http/json-schema";
import { AppError } from "../../lib/errors";
import { invokeTool } from "./invoke";
import type { McpRuntime } from "./runtime";
import pkg from "../../../package.json";

/** Browsers send Origin; a page on another site must not drive a local server (DNS rebinding). */
export function assertOriginAllowed(request: Request, allowed: readonly string[]): void {
  const origin = request.headers.get("origin");
  if (!origin) return;
  const host = request.headers.get("host");
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = undefined;
  }
  if ((host && originHost === host) || allowed.includes(origin)) return;
  throw new AppError("ORIGIN_NOT_ALLOWED", `Origin ${origin} is not allowed`);
}

const asJsonSchema = (schema: object) => plainJsonSchema(JSON.parse(JSON.stringify(schema))) as { type: "object"; [k: string]: unknown };

/**
 * Real MCP over Streamable HTTP, stateless with JSON responses: a server per request, the same
 * registry, key authentication, scopes, quota and usage log as `/mcp/tools/{tool}/invoke`.
 */
export async function handleMcpRequest(runtime: McpRuntime, request: Request, parsedBody: unknown, requestId: string): Promise<Response> {
  const authorization = request.headers.get("authorization");
  await runtime.ready;
  const key = await runtime.keys.authenticate(authorization);

  const server = new Server({ name: "vet-clinic-service", version: pkg.version }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await runtime.toolsFor(key)).map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: `${tool.description} (scope: ${tool.scope})`,
      inputSchema: asJsonSchema(tool.inputSchema),
      outputSchema: asJsonSchema(tool.outputSchema),
      annotations: { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const outcome = await invokeTool(runtime, { authorization, tool: call.params.name, input: call.params.arguments ?? {}, requestId });
    const text = JSON.stringify(outcome.body);
    // No structuredContent on errors: clients validate it against the output schema.
    return outcome.ok ? { content: [{ type: "text" as const, text }], structuredContent: outcome.body } : { isError: true, content: [{ type: "text" as const, text }] };
  });

  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    void server.close();
  }
}
