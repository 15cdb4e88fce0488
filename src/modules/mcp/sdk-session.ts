import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { toolJsonSchema } from "../../http/json-schema";
import { invokeTool } from "./invoke";
import type { McpRuntime } from "./runtime";
import { registerSurface, SURFACE_CAPABILITIES } from "./surface";
import { isUnknownTool, toolResultJson, unknownToolError } from "./tool-result";
import pkg from "../../../package.json";

export { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/**
 * Everything of POST /mcp that needs the MCP SDK, loaded on the first MCP call (McpRuntime.sdk):
 * a server made for the request, with the tools, resources, prompts and completion of the
 * caller's key, answering through the SDK's stateless transport with JSON responses.
 */
export async function answerThroughSdk(runtime: McpRuntime, request: Request, parsedBody: unknown, requestId: string): Promise<Response> {
  const authorization = request.headers.get("authorization");
  const key = await runtime.keys.authenticate(authorization);

  const server = new Server({ name: "vet-clinic-service", version: pkg.version }, { capabilities: { tools: { listChanged: false }, ...SURFACE_CAPABILITIES } });
  registerSurface(server, runtime, key);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await runtime.toolsFor(key)).map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: `${tool.description} (scope: ${tool.scope})`,
      inputSchema: toolJsonSchema(tool.inputSchema),
      outputSchema: toolJsonSchema(tool.outputSchema),
      annotations: { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (call) => {
    const outcome = await invokeTool(runtime, { authorization, tool: call.params.name, input: call.params.arguments ?? {}, requestId });
    // The SDK answers a thrown error's code, message and data as they are (McpError would prefix the message).
    if (isUnknownTool(outcome)) {
      const { code, message, data } = unknownToolError(call.params.name, outcome);
      throw Object.assign(new Error(message), { code, data });
    }
    return JSON.parse(toolResultJson(outcome)) as { content: { type: "text"; text: string }[] };
  });

  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    void server.close();
  }
}
