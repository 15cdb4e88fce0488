import { AppError } from "../../lib/errors";
import { invokeTool, type InvokeOutcome } from "./invoke";
import type { McpRuntime } from "./runtime";
import type { Config } from "../../config";
import { isLoopbackHost } from "../oauth/redirect-uris";
import { isUnknownTool, toolResultJson, unknownToolError } from "./tool-result";

/** Browsers send Origin; a page on another site must not drive a local server (DNS rebinding). */
export function assertOriginAllowed(request: Request, allowed: readonly string[]): void {
  const origin = request.headers.get("origin");
  if (!origin) return;
  const host = request.headers.get("host");
  if ((host && URL.parse(origin)?.host === host) || allowed.includes(origin)) return;
  throw new AppError("ORIGIN_NOT_ALLOWED", `Origin ${origin} is not allowed`);
}

/**
 * A page on another site can point its own name at this server's address (DNS rebinding) and
 * reach it with the browser's own credentials and network position; the request then carries
 * that foreign name as its Host. Only the public URL's host, the listener's own address and
 * loopback names are served.
 */
export function assertHostAllowed(request: Request, config: Pick<Config, "publicUrl" | "host">): void {
  const raw = request.headers.get("host") ?? new URL(request.url).host;
  const hostname = URL.parse(`http://${raw}`)?.hostname ?? "";
  if (isLoopbackHost(hostname)) return;
  if (config.publicUrl && new URL(config.publicUrl).hostname === hostname) return;
  if (config.host !== "0.0.0.0" && config.host !== "::" && config.host === hostname) return;
  throw new AppError("FORBIDDEN", `The Host ${raw} is not this server's: set PUBLIC_URL to the address clients use`, { reason: "host_not_allowed" });
}

/** A tools/call the SDK would accept as it is: one request, nothing to negotiate. */
interface PlainToolCall {
  id: string | number;
  name: string;
  input: Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The one message assistants send over and over. Returns it when the request passes every check
 * the SDK's transport makes (Accept, Content-Type, protocol version) and the message is a single
 * well-formed `tools/call`; anything else (batches, other methods, odd shapes, errors to report)
 * goes through the SDK, which answers it as the protocol says.
 */
function plainToolCall(request: Request, body: unknown, supportedVersions: readonly string[]): PlainToolCall | undefined {
  const accept = request.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  const mediaType = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") return undefined;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !supportedVersions.includes(version)) return undefined;
  if (!isPlainObject(body) || body.jsonrpc !== "2.0" || body.method !== "tools/call") return undefined;
  const id = body.id;
  if (!(typeof id === "string" || (typeof id === "number" && Number.isInteger(id)))) return undefined;
  const params = body.params;
  if (!isPlainObject(params) || typeof params.name !== "string") return undefined;
  const input = params.arguments ?? {};
  if (!isPlainObject(input)) return undefined;
  return { id, name: params.name, input };
}

/** A JSON-RPC answer to send as it is: 200, `application/json`. */
export interface JsonRpcAnswer {
  json: string;
}

/**
 * Real MCP over Streamable HTTP, stateless with JSON responses, with the same registry, key
 * authentication, scopes, quota and usage log as `/mcp/tools/{tool}/invoke`. A plain tools/call
 * is answered directly (the same bytes the SDK would send, without building a server and a
 * transport for it), as text rather than a Response: a Response handed back to Elysia is copied
 * into a new one (its body as a stream) to add the app's headers. Every other message goes
 * through a server made for the request. The SDK is loaded with the first MCP call: an idle
 * server does not hold it.
 */
export async function handleMcpRequest(
  runtime: McpRuntime,
  request: Request,
  parsedBody: unknown,
  requestId: string,
  scopeChallenge: (outcome: InvokeOutcome) => Record<string, string> = () => ({}),
): Promise<Response | JsonRpcAnswer> {
  const authorization = request.headers.get("authorization");
  await runtime.ready;
  const sdk = await runtime.sdk(() => import("./sdk-session"));
  const call = plainToolCall(request, parsedBody, sdk.SUPPORTED_PROTOCOL_VERSIONS);
  if (call) {
    const outcome = await invokeTool(runtime, { authorization, tool: call.name, input: call.input, requestId });
    // An OAuth connection is told over HTTP that it lacks a scope, so its client can ask the owner
    // for more (a key keeps getting the tool error, as it always has).
    const challenge = outcome.key.kind === "connection" ? scopeChallenge(outcome) : {};
    if (challenge["www-authenticate"]) {
      const error = { code: -32001, message: String(outcome.body.message), data: outcome.body };
      return new Response(JSON.stringify({ jsonrpc: "2.0", id: call.id, error }), {
        status: 403,
        headers: { "content-type": "application/json", "x-request-id": requestId, ...outcome.headers, ...challenge },
      });
    }
    if (isUnknownTool(outcome)) return { json: JSON.stringify({ jsonrpc: "2.0", id: call.id, error: unknownToolError(call.name, outcome) }) };
    return { json: `{"result":${toolResultJson(outcome)},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}` };
  }
  return sdk.answerThroughSdk(runtime, request, parsedBody, requestId);
}
