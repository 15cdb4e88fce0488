import { cors } from "@elysiajs/cors";
import { Elysia } from "elysia";
import type { Config } from "../config";

/**
 * CORS through Elysia's plugin. Only listed origins get CORS headers (and with them the
 * refresh cookie, since credentials are allowed): CORS_ORIGINS for the REST API, and the same
 * MCP_ALLOWED_ORIGINS that POST /mcp's own Origin check accepts, for /mcp and the OAuth
 * endpoints and metadata documents, so a browser the MCP endpoint would answer can also pass
 * its preflight and authorize. With both empty (the default), only same-origin
 * pages can call the service.
 */
export function allowedCorsOrigin(request: Request, config: Pick<Config, "corsOrigins" | "mcpAllowedOrigins">): boolean {
  const origin = request.headers.get("origin");
  if (!origin) return false;
  const allowed = isMcpClientPath(new URL(request.url).pathname) ? config.mcpAllowedOrigins : config.corsOrigins;
  return allowed.includes(origin);
}

/** The OAuth endpoints and discovery documents an MCP client calls before it reaches /mcp. */
const OAUTH_CLIENT_PATHS: readonly string[] = ["/authorize", "/token", "/register", "/revoke", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"];

/** Paths an MCP client calls: /mcp and below, and the authorization server's own (a browser-based client runs the whole flow from its origin). */
function isMcpClientPath(path: string): boolean {
  return path === "/mcp" || path.startsWith("/mcp/") || OAUTH_CLIENT_PATHS.includes(path) || path.startsWith("/.well-known/oauth-protected-resource");
}

/**
 * What an allowed origin is told besides its own name. The plugin would add these to every
 * response, a caller without an Origin (every MCP client, every server-side app) included: on a
 * busy MCP endpoint, four headers (400 bytes) of nothing for the client to read on each answer.
 */
const ALLOWED_ORIGIN_HEADERS = {
  "access-control-allow-credentials": "true",
  "access-control-allow-methods": "GET, POST, PATCH, DELETE, OPTIONS",
  "access-control-allow-headers": "authorization, content-type, idempotency-key, x-request-id, mcp-protocol-version, mcp-session-id, last-event-id",
  "access-control-expose-headers": "x-request-id, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset, retry-after, idempotent-replayed, mcp-session-id, www-authenticate",
};

/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = "600";

export const corsPolicy = (config: Config) =>
  new Elysia({ name: "cors-policy" })
    // Runs before the plugin's own hook, so a preflight it answers carries these headers too.
    .onRequest(({ request, set }) => {
      if (!allowedCorsOrigin(request, config)) return;
      Object.assign(set.headers, ALLOWED_ORIGIN_HEADERS);
      if (request.method === "OPTIONS") set.headers["access-control-max-age"] = PREFLIGHT_MAX_AGE_SECONDS;
    })
    .use(
      cors({
        origin: (request) => allowedCorsOrigin(request, config),
        // The plugin reads `false` as "send none" (its types leave `false` out for these two).
        credentials: false,
        methods: false,
        allowedHeaders: false as unknown as string,
        exposeHeaders: false as unknown as string,
        maxAge: 0,
      }),
    );
