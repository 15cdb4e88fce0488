import type { InvokeOutcome } from "./invoke";

/** JSON-RPC's "invalid params" error code. */
const INVALID_PARAMS = -32602;

/** A tool result as the protocol carries it: the text copy for older clients, and no structuredContent on errors (clients validate it against the output schema). */
export function toolResultJson(outcome: { ok: boolean; body: Record<string, unknown> }): string {
  const text = JSON.stringify(outcome.body);
  const content = `[{"type":"text","text":${JSON.stringify(text)}}]`;
  return outcome.ok ? `{"content":${content},"structuredContent":${text}}` : `{"isError":true,"content":${content}}`;
}

export const isUnknownTool = (outcome: InvokeOutcome) => !outcome.ok && outcome.body.code === "TOOL_NOT_FOUND";

/**
 * A call to a tool that does not exist is a protocol error, not a tool's failure: JSON-RPC
 * -32602 (invalid params), as the MCP specification names it, with the REST envelope as data.
 * It is still counted and logged, like the REST endpoint's 404.
 */
export function unknownToolError(name: string, outcome: InvokeOutcome) {
  return { code: INVALID_PARAMS, message: `Unknown tool: ${name}`, data: outcome.body };
}
