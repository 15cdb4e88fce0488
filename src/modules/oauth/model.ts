import { t } from "elysia";
import { NullableTimestamp, StrictInteger, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, updatedSinceQueryField } from "../../http/pagination";
import { Scope } from "../mcp-keys/model";

const Text = (maxLength: number, examples?: unknown[]) => t.String({ maxLength, ...(examples ? { examples } : {}) });

/** RFC 7591 client metadata; other members are accepted and dropped, as the RFC allows. */
export const RegistrationBody = t.Object(
  {
    redirect_uris: t.Array(Text(2000), { minItems: 1, maxItems: 20, examples: [["http://127.0.0.1:33418/callback"]] }),
    client_name: t.Optional(Text(200, ["Claude"])),
    client_uri: t.Optional(Text(2000)),
    logo_uri: t.Optional(Text(2000)),
    scope: t.Optional(Text(200, ["read query clinic_context"])),
    grant_types: t.Optional(t.Array(Text(100), { maxItems: 20, examples: [["authorization_code", "refresh_token"]] })),
    response_types: t.Optional(t.Array(Text(100), { maxItems: 20, examples: [["code"]] })),
    token_endpoint_auth_method: t.Optional(Text(100, ["none"])),
    contacts: t.Optional(t.Array(Text(200), { maxItems: 10 })),
    tos_uri: t.Optional(Text(2000)),
    policy_uri: t.Optional(Text(2000)),
    software_id: t.Optional(Text(200)),
    software_version: t.Optional(Text(100)),
  },
  { additionalProperties: true, description: "RFC 7591 client metadata. Every client is registered as a public client (token_endpoint_auth_method none, PKCE): a confidential method asked for is replaced and the answer says so" },
);

export const RegisteredClient = t.Object(
  {
    client_id: t.String(),
    client_id_issued_at: t.Integer(),
    redirect_uris: t.Array(t.String()),
    grant_types: t.Array(t.String()),
    response_types: t.Array(t.String()),
    token_endpoint_auth_method: t.Literal("none"),
    client_name: t.Optional(t.String()),
    client_uri: t.Optional(t.String()),
    logo_uri: t.Optional(t.String()),
    scope: t.Optional(t.String()),
    software_id: t.Optional(t.String()),
    software_version: t.Optional(t.String()),
  },
  { description: "The registered client (optional fields appear only when they were sent)" },
);

export const OAuthErrorModel = t.Object({ error: t.String(), error_description: t.String() }, { description: "An RFC 6749 / RFC 7591 error" });

/** GET /authorize's parameters (RFC 6749 §4.1.1 with PKCE and RFC 8707's resource); others that clients send are declared so they are not refused. */
export const AuthorizeQuery = t.Object({
  response_type: t.Optional(Text(50)),
  client_id: t.Optional(Text(2000)),
  redirect_uri: t.Optional(Text(2000)),
  scope: t.Optional(Text(500)),
  state: t.Optional(Text(1000)),
  code_challenge: t.Optional(Text(200)),
  code_challenge_method: t.Optional(Text(20)),
  resource: t.Optional(Text(2000)),
  prompt: t.Optional(Text(100)),
  response_mode: t.Optional(Text(50)),
  nonce: t.Optional(Text(500)),
  login_hint: t.Optional(Text(500)),
  ui_locales: t.Optional(Text(100)),
});

const SealedRequest = t.String({ minLength: 10, maxLength: 8000, description: "The authorization request the console got from /authorize" });

export const AuthorizationRequestQuery = t.Object({ request: SealedRequest });

export const AuthorizationRequestModel = t.Object({
  client_id: t.String(),
  client_name: t.String(),
  client_name_verified: t.Boolean({ description: "False when the client chose its name itself (registration or its own metadata document): nobody checked it" }),
  redirect_host: t.String({ description: "Where the browser is sent back, and the code with it: the redirect URI's exact host (its scheme when it has none)" }),
  redirect_scheme: t.String({ description: "The redirect URI's scheme: https, http (loopback only) or a private-use scheme an app on the computer registered" }),
  redirect_uri: t.String({ description: "The exact redirect URI" }),
  loopback_only: t.Boolean({ description: "The client receives the code on the approving person's own machine" }),
  requested_scopes: t.Array(t.String()),
  scopes_supported: t.Array(t.String()),
  default_rate_limit_per_day: t.Integer(),
});

export const DecisionBody = t.Object({
  request: SealedRequest,
  approve: t.Boolean(),
  scopes: t.Optional(t.Array(Scope, { maxItems: 3, uniqueItems: true, examples: [["read", "query"]] })),
  rate_limit_per_day: t.Optional(StrictInteger({ minimum: 1, maximum: 1_000_000, default: 1000 })),
});

export const DecisionModel = t.Object({ redirect_to: t.String({ description: "Where the console sends the browser: the client's redirect URI with code, state and iss (or error=access_denied)" }) });

export const ConnectionModel = t.Object({
  id: Uuid,
  client_id: t.String(),
  client_name: t.String(),
  redirect_host: t.String(),
  scopes: t.Array(t.String()),
  rate_limit_per_day: t.Integer(),
  burst_per_minute: t.Integer(),
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
});

export const ConnectionListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });
