import { isConnectionError, loggableError } from "../../lib/error-log";
import type { UsageOutcome } from "../../db/schema";
import { AppError, envelope } from "../../lib/errors";
import { rfc3339 } from "../../lib/time";
import type { KeyPrincipal } from "../mcp-keys/directory";
import type { QuotaDecision } from "./quotas";
import { validateInput } from "./registry";
import type { McpRuntime } from "./runtime";

export interface InvokeRequest {
  authorization: string | null;
  tool: string;
  input: unknown;
  requestId: string;
}

/**
 * One answer for every surface: `/invoke` sends it as it is, `POST /mcp` wraps it in a tool
 * result (`isError` when not ok). An error's body is the envelope, its headers included.
 */
export interface InvokeOutcome {
  ok: boolean;
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  key: KeyPrincipal;
}

export function quotaHeaders(decision: { limit: number; remaining: number; resetAt: Date }): Record<string, string> {
  return {
    "x-ratelimit-limit": String(decision.limit),
    "x-ratelimit-remaining": String(Math.max(0, decision.remaining)),
    "x-ratelimit-reset": String(Math.floor(decision.resetAt.getTime() / 1000)),
  };
}

function refusal(decision: Exclude<QuotaDecision, { admitted: true }>, now: Date): AppError {
  if (decision.reason === "burst") {
    return new AppError(
      "BURST_LIMIT_EXCEEDED",
      `More than ${decision.limitPerMinute} calls in the last minute; retry in ${decision.retryAfterSeconds} s`,
      { limit_per_minute: decision.limitPerMinute, retry_after: decision.retryAfterSeconds },
      { "retry-after": String(decision.retryAfterSeconds) },
    );
  }
  const retryAfter = Math.max(1, Math.ceil((decision.resetAt.getTime() - now.getTime()) / 1000));
  return new AppError(
    "RATE_LIMIT_EXCEEDED",
    `The daily quota of ${decision.limit} calls is used up; it resets at ${rfc3339(decision.resetAt)}`,
    { limit: decision.limit, reset_at: rfc3339(decision.resetAt) },
    { "retry-after": String(retryAfter) },
  );
}

function outcomeOf(error: AppError): UsageOutcome {
  if (error.code === "SQL_GUARD_BLOCKED") return "blocked";
  if (error.code === "INSUFFICIENT_SCOPE" || error.code === "TOOL_NOT_FOUND") return "denied";
  return "error";
}

/**
 * One tool call, for every surface, in the contract's order: authenticate → burst cap →
 * daily quota → count 1 → scope → tool → body → run → log. Authentication failures throw
 * (they belong to no key); every later outcome is returned with the quota headers.
 */
export async function invokeTool(runtime: McpRuntime, request: InvokeRequest): Promise<InvokeOutcome> {
  const started = performance.now();
  await runtime.ready;
  const key = await runtime.keys.authenticate(request.authorization);
  const decision = await runtime.quotas.admit(key);
  runtime.noteKeyUsed(key);
  const headers = quotaHeaders(decision);
  // A built-in tool's text is known without a lookup, so even a rate-limited call keeps its SQL.
  let sqlText = runtime.registry.get(request.tool)?.logText?.(request.input) ?? null;
  const log = (statusCode: number, outcome: UsageOutcome, extra: { reason?: string; rowsReturned?: number } = {}) =>
    runtime.usage.record({
      clinicId: key.clinicId,
      apiKeyId: key.id,
      tool: request.tool,
      statusCode,
      outcome,
      reason: extra.reason ?? null,
      sqlText,
      rowsReturned: extra.rowsReturned ?? null,
      durationMs: performance.now() - started,
      requestId: request.requestId,
      at: runtime.deps.clock.now(),
      countedAgainst: decision.admitted ? { principalId: key.id, day: decision.day } : null,
    });

  const failed = (error: AppError): InvokeOutcome => ({
    ok: false,
    status: error.status,
    headers: { ...headers, ...error.headers },
    body: envelope(error, request.requestId) as unknown as Record<string, unknown>,
    key,
  });
  if (!decision.admitted) {
    const error = refusal(decision, runtime.deps.clock.now());
    log(429, "rate_limited", { reason: error.code });
    return failed(error);
  }
  try {
    const tool = await runtime.findTool(key, request.tool);
    if (!tool) throw new AppError("TOOL_NOT_FOUND", `There is no tool named ${request.tool}`);
    sqlText = tool.logText?.(request.input) ?? null;
    if (!key.scopes.includes(tool.scope)) {
      throw new AppError("INSUFFICIENT_SCOPE", `The tool ${tool.name} needs the scope ${tool.scope}`, { required_scope: tool.scope });
    }
    validateInput(tool, request.input);
    const run = await tool.run({ database: runtime.deps.database, clock: runtime.deps.clock, config: runtime.deps.config, sql: runtime.sql, key }, request.input);
    log(200, "ok", { rowsReturned: run.rowsReturned });
    return { ok: true, status: 200, headers, body: run.result, key };
  } catch (thrown) {
    const unavailable = !(thrown instanceof AppError) && isConnectionError(thrown);
    const error = thrown instanceof AppError ? thrown : unavailable ? AppError.unavailable() : new AppError("INTERNAL_ERROR", "The tool failed unexpectedly");
    if (!(thrown instanceof AppError) && !unavailable) {
      runtime.deps.logger.error("tool failed", { tool: request.tool, request_id: request.requestId, ...loggableError(thrown) });
    }
    const reason = typeof error.details?.reason === "string" ? error.details.reason : error.code;
    log(error.status, outcomeOf(error), { reason });
    return failed(error);
  }
}
