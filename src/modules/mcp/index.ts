import { Elysia, t, type TSchema } from "elysia";
import type { AppContext } from "../../context";
import { ErrorEnvelope, errorResponses } from "../../http/common-model";
import { toolJsonSchema } from "../../http/json-schema";
import { isConnectionError } from "../../lib/error-log";
import { AppError, envelope } from "../../lib/errors";
import { invokeTool, quotaHeaders } from "./invoke";
import { assertHostAllowed, assertOriginAllowed, handleMcpRequest } from "./protocol";
import { nextUtcMidnight } from "../../lib/time";
import { bearerChallenge, publicOrigin } from "../oauth/metadata";

/**
 * A 401 from the MCP endpoints tells an OAuth client where to start (RFC 9728 §5.1): the
 * protected-resource metadata and the scopes to ask for; `invalid_token` when a Bearer token was
 * sent and refused, no error code when none was or the credentials were of another scheme
 * (Basic, …), which is a request without authentication information (RFC 6750 §3.1).
 */
async function challenged<T>(request: Request, origin: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError) || error.status !== 401) throw error;
    const bearer = /^bearer(\s|$)/i.test(request.headers.get("authorization")?.trim() ?? "");
    const refused = error.code !== "AUTH_REQUIRED" && bearer;
    const challenge = bearerChallenge(origin, refused ? { error: "invalid_token", description: error.message } : {});
    throw new AppError(error.code, error.message, error.details, { ...error.headers, "www-authenticate": challenge });
  }
}

/** A 403 for a missing scope carries the scope to ask for, so an OAuth client can step up (RFC 6750 §3.1). */
function scopeChallenge(outcome: { status: number; body: Record<string, unknown> }, origin: string): Record<string, string> {
  const details = outcome.body.details as { required_scope?: string } | undefined;
  if (outcome.status !== 403 || outcome.body.code !== "INSUFFICIENT_SCOPE" || !details?.required_scope) return {};
  return { "www-authenticate": bearerChallenge(origin, { error: "insufficient_scope", scopes: [details.required_scope] }) };
}

const ToolInfo = t.Object({
  name: t.String(),
  title: t.String(),
  description: t.String(),
  scope: t.String(),
  input_schema: t.Record(t.String(), t.Unknown()),
  output_schema: t.Record(t.String(), t.Unknown()),
});

/** A JSON-RPC error answer; `data`, when present, is the REST envelope. */
const JsonRpcError = (description: string, data: TSchema = ErrorEnvelope) =>
  t.Object(
    {
      jsonrpc: t.Literal("2.0"),
      id: t.Union([t.String(), t.Number(), t.Null()]),
      error: t.Object({ code: t.Integer(), message: t.String(), data: t.Optional(data) }),
    },
    { description },
  );

/** An outage answered as JSON-RPC (the client speaks it), with the REST envelope as its data. */
function unavailableJsonRpc(body: unknown, requestId: string): Response {
  const error = AppError.unavailable();
  const id = body && typeof body === "object" && "id" in body ? (body as { id: unknown }).id : null;
  const payload = { jsonrpc: "2.0", id: id ?? null, error: { code: -32000, message: error.message, data: envelope(error, requestId) } };
  return new Response(JSON.stringify(payload), {
    status: 503,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId, ...error.headers },
  });
}

/** The answer to GET and DELETE /mcp: 405, naming POST. */
function methodNotAllowed(why: string): never {
  throw new AppError("METHOD_NOT_ALLOWED", `This MCP endpoint is stateless: ${why}`, undefined, { allow: "POST" });
}

/** The MCP surface: tool lists and invocation with per-clinic API keys, and real MCP at POST /mcp. */
export const mcpModule = ({ mcp, database, config, clock, requests }: AppContext) =>
  new Elysia({ prefix: "/mcp", tags: ["mcp"] as never })
    .get(
      "/health",
      async () => {
        const up = await database.query("select 1").then(() => true, () => false);
        return { status: up ? "ok" : "degraded", database: up ? "ok" : "unreachable" };
      },
      { response: t.Object({ status: t.String(), database: t.String() }), detail: { summary: "MCP health; no auth, not counted" } },
    )
    .get(
      "/tools",
      async ({ request, set }) => {
        await mcp.ready;
        const key = await challenged(request, publicOrigin(config, request), () => mcp.keys.authenticate(request.headers.get("authorization")));
        await mcp.quotas.prepare(key.id);
        const used = mcp.quotas.used(key.id);
        Object.assign(set.headers, quotaHeaders({ limit: key.rateLimitPerDay, remaining: key.rateLimitPerDay - used, resetAt: nextUtcMidnight(clock.now()) }));
        return {
          tools: (await mcp.toolsFor(key)).map((tool) => ({
            name: tool.name,
            title: tool.title,
            description: tool.description,
            scope: tool.scope,
            input_schema: toolJsonSchema(tool.inputSchema),
            output_schema: toolJsonSchema(tool.outputSchema),
          })),
        };
      },
      { response: { 200: t.Object({ tools: t.Array(ToolInfo) }), ...errorResponses(401) }, detail: { summary: "The tools (key required, not counted)", "x-rate-limited": true } },
    )
    .post(
      "/tools/:tool/invoke",
      async ({ params, body, request, set, status }) => {
        const requestId = requests.of(request).id;
        const origin = publicOrigin(config, request);
        const outcome = await challenged(request, origin, () => invokeTool(mcp, { authorization: request.headers.get("authorization"), tool: params.tool, input: body, requestId }));
        requests.of(request).clinicId = outcome.key.clinicId;
        Object.assign(set.headers, outcome.headers, scopeChallenge(outcome, origin));
        return status(outcome.status as 200, outcome.body);
      },
      {
        params: t.Object({ tool: t.String({ maxLength: 100 }) }),
        body: t.Unknown(),
        response: { 200: t.Record(t.String(), t.Unknown()), ...errorResponses(400, 401, 403, 404, 422, 429) },
        detail: { summary: "Invoke a tool with an API key", "x-rate-limited": true },
      },
    )
    .post(
      "/",
      async ({ request, body, set }) => {
        assertHostAllowed(request, config);
        assertOriginAllowed(request, config.mcpAllowedOrigins);
        const requestId = requests.of(request).id;
        const origin = publicOrigin(config, request);
        try {
          const answer = await challenged(request, origin, () => handleMcpRequest(mcp, request, body, requestId, (outcome) => scopeChallenge(outcome, origin)));
          if (answer instanceof Response) return answer;
          set.headers["content-type"] = "application/json";
          return answer.json;
        } catch (error) {
          if (!(error instanceof AppError) && isConnectionError(error)) return unavailableJsonRpc(body, requestId);
          throw error;
        }
      },
      {
        body: t.Unknown(),
        response: {
          400: t.Union([ErrorEnvelope, JsonRpcError("A JSON-RPC error: an unsupported MCP-Protocol-Version or a message that is not JSON-RPC")], {
            description: "INVALID_JSON in the envelope (the body is not JSON), or a JSON-RPC error from the protocol",
          }),
          403: t.Union([ErrorEnvelope, JsonRpcError("A JSON-RPC error: an OAuth connection called a tool outside its scopes (WWW-Authenticate names the scope to ask for)")], {
            description: "ORIGIN_NOT_ALLOWED or HOST_NOT_ALLOWED in the envelope, or insufficient_scope for an OAuth connection",
          }),
          406: JsonRpcError("The client must accept application/json and text/event-stream"),
          415: t.Union([ErrorEnvelope, JsonRpcError("Content-Type must be application/json")], { description: "UNSUPPORTED_MEDIA_TYPE" }),
          503: JsonRpcError("A JSON-RPC error: the database is unavailable (the envelope is its data)"),
        },
        detail: {
          summary: "Model Context Protocol (Streamable HTTP, stateless, JSON responses)",
          "x-rate-limited": true,
          "x-statuses": { "202": "Accepted: the message was a notification or a response" },
        },
      },
    )
    // Not operations: they only say that this endpoint takes POST (so they stay out of the document).
    .get("/", () => methodNotAllowed("POST JSON-RPC messages"), { detail: { hide: true } })
    .delete("/", () => methodNotAllowed("there is no session to delete"), { detail: { hide: true } });
