import { cors } from "@elysiajs/cors";
import type { Config } from "../config";

/**
 * CORS through Elysia's plugin. Only listed origins get CORS headers (and with them the
 * refresh cookie, since credentials are allowed): CORS_ORIGINS for the REST API, and the same
 * MCP_ALLOWED_ORIGINS that POST /mcp's own Origin check accepts, so a browser the MCP endpoint
 * would answer can also pass its preflight. With both empty (the default), only same-origin
 * pages can call the service.
 */
export function allowedCorsOrigin(request: Request, config: Pick<Config, "corsOrigins" | "mcpAllowedOrigins">): boolean {
  const origin = request.headers.get("origin");
  if (!origin) return false;
  const path = new URL(request.url).pathname;
  const allowed = path === "/mcp" || path.startsWith("/mcp/") ? config.mcpAllowedOrigins : config.corsOrigins;
  return allowed.includes(origin);
}

export const corsPolicy = (config: Config) =>
  cors({
    origin: (request) => allowedCorsOrigin(request, config),
    credentials: true,
    methods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
    allowedHeaders: ["authorization", "content-type", "idempotency-key", "x-request-id", "mcp-protocol-version", "mcp-session-id", "last-event-id"],
    exposeHeaders: ["x-request-id", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after", "idempotent-replayed", "mcp-session-id"],
    maxAge: 600,
  });
