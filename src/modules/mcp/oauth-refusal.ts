import { Elysia, t } from "elysia";

/**
 * MCP clients that meet a 401 (mcp-remote, the Inspector) try OAuth: discovery, then dynamic
 * client registration at /register. This service authenticates MCP with API keys and has no
 * OAuth server, so registration answers an RFC 7591 error whose description tells the person
 * what is wrong, and the client stops with that message instead of hanging or falling back to
 * another transport (a 404 here made mcp-remote try SSE and fail with an unrelated 405).
 */
export const API_KEY_NOT_OAUTH =
  "This MCP server does not use OAuth: it takes an API key (Authorization: Bearer svc_…). The API key this client sent was refused: it is invalid, revoked or expired. Create or rotate a key in the clinic's MCP keys and pass it with --header \"Authorization: Bearer svc_…\".";

export const oauthRefusal = () =>
  new Elysia({ name: "oauth-refusal" }).post(
    "/register",
    ({ status }) => status(400, { error: "invalid_client_metadata" as const, error_description: API_KEY_NOT_OAUTH }),
    {
      body: t.Unknown(),
      response: { 400: t.Object({ error: t.Literal("invalid_client_metadata"), error_description: t.String() }, { description: "RFC 7591 error: there is no OAuth here" }) },
      detail: { tags: ["mcp"], summary: "OAuth dynamic client registration: always refused, saying the API key was refused" },
    },
  );
