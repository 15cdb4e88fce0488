import type { Config } from "../../config";
import { API_KEY_SCOPES } from "../../db/schema";
import { isLoopbackHost } from "./redirect-uris";

/** The scopes a connection can hold: the API key scopes (saved reports each need one of them). */
export const OAUTH_SCOPES = API_KEY_SCOPES;

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
export const AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server";

/** The service's public origin: PUBLIC_URL, or the origin the request reached when it is unset. */
export function publicOrigin(config: Pick<Config, "publicUrl">, request: Request): string {
  return config.publicUrl ?? new URL(request.url).origin;
}

/** The one MCP resource this server protects, in its canonical form. */
export const mcpResource = (origin: string) => `${origin}/mcp`;

/** Whether the public origin is plain http on a loopback name (development and tests). */
export function isLoopbackHttp(origin: string): boolean {
  const url = new URL(origin);
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}

/** RFC 9728 protected-resource metadata for `/mcp`. */
export function protectedResourceMetadata(origin: string) {
  return {
    resource: mcpResource(origin),
    authorization_servers: [origin],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Vet clinic MCP",
  };
}

/** RFC 8414 authorization-server metadata. */
export function authorizationServerMetadata(origin: string) {
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    revocation_endpoint: `${origin}/revoke`,
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * The Bearer challenge of a 401 or 403 from `/mcp`: where the protected-resource metadata is,
 * and the scopes to ask for (RFC 6750, RFC 9728 §5.1).
 */
export function bearerChallenge(origin: string, options: { error?: string; description?: string; scopes?: readonly string[] } = {}): string {
  const parts: string[] = [];
  if (options.error) parts.push(`error="${options.error}"`);
  if (options.description) parts.push(`error_description="${options.description.replaceAll('"', "'")}"`);
  parts.push(`resource_metadata="${origin}${PROTECTED_RESOURCE_PATH}/mcp"`);
  parts.push(`scope="${(options.scopes ?? OAUTH_SCOPES).join(" ")}"`);
  return `Bearer ${parts.join(", ")}`;
}
