import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { recordColumns, timestampColumn } from "./columns";
import type { ApiKeyScope } from "./mcp";

/**
 * MCP clients registered through OAuth dynamic client registration (RFC 7591). Clients that
 * identify themselves with a Client ID Metadata Document are not stored: their document is read
 * again at each authorization.
 */
export const oauthClients = pgTable(
  "oauth_clients",
  {
    id: uuid("id").primaryKey(),
    /** The `client_id` handed to the client (random, not a secret: these clients are public). */
    client_id: text("client_id").notNull(),
    client_name: text("client_name"),
    redirect_uris: text("redirect_uris").array().notNull(),
    /** The registration as accepted, echoed back to the client. */
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull(),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [uniqueIndex("oauth_clients_client_id_key").on(t.client_id)],
);

/**
 * An assistant an owner approved: a principal like an API key, with its own scopes, daily quota
 * and usage rows (their `api_key_id` holds the connection's id). Ending it sets `revoked_at`.
 */
export const oauthConnections = pgTable(
  "oauth_connections",
  {
    ...recordColumns(),
    client_id: text("client_id").notNull(),
    client_name: text("client_name").notNull(),
    redirect_uri: text("redirect_uri").notNull(),
    scopes: text("scopes").array().$type<ApiKeyScope[]>().notNull(),
    rate_limit_per_day: integer("rate_limit_per_day").notNull(),
    created_by: uuid("created_by"),
    last_used_at: timestampColumn("last_used_at"),
    revoked_at: timestampColumn("revoked_at"),
  },
  (t) => [index("oauth_connections_clinic_created_idx").on(t.clinic_id, t.created_at, t.id)],
);

/**
 * Authorization codes: single use, a few minutes long, stored as SHA-256 digests. They carry
 * what the owner approved; the connection is made when the code is exchanged (`connection_id`),
 * so an approval never completed leaves no connection behind.
 */
export const oauthAuthorizationCodes = pgTable("oauth_authorization_codes", {
  code_hash: text("code_hash").primaryKey(),
  clinic_id: uuid("clinic_id").notNull(),
  client_id: text("client_id").notNull(),
  client_name: text("client_name").notNull(),
  redirect_uri: text("redirect_uri").notNull(),
  scopes: text("scopes").array().$type<ApiKeyScope[]>().notNull(),
  rate_limit_per_day: integer("rate_limit_per_day").notNull(),
  approved_by: uuid("approved_by").notNull(),
  connection_id: uuid("connection_id"),
  code_challenge: text("code_challenge").notNull(),
  expires_at: timestampColumn("expires_at").notNull(),
  used_at: timestampColumn("used_at"),
  created_at: timestampColumn("created_at").notNull(),
});

export const OAUTH_TOKEN_KINDS = ["access", "refresh"] as const;
export type OAuthTokenKind = (typeof OAUTH_TOKEN_KINDS)[number];

/** Access and refresh tokens of connections, as SHA-256 digests only. */
export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    id: uuid("id").primaryKey(),
    connection_id: uuid("connection_id").notNull(),
    kind: text("kind").$type<OAuthTokenKind>().notNull(),
    token_hash: text("token_hash").notNull(),
    expires_at: timestampColumn("expires_at").notNull(),
    /** When a refresh token was exchanged for a new pair; it is honoured for a grace window after. */
    rotated_at: timestampColumn("rotated_at"),
    /**
     * The answer a refresh token was exchanged for, sealed with the secret box: presented again
     * within the grace window, it gets this same answer, so a connection never forks in two chains.
     */
    successor: text("successor"),
    created_at: timestampColumn("created_at").notNull(),
  },
  (t) => [uniqueIndex("oauth_tokens_hash_key").on(t.token_hash), index("oauth_tokens_connection_idx").on(t.connection_id)],
);

/**
 * Authorization requests the owner has approved or denied, by the request's random id: a
 * signed request is decided once. Rows outlive the request's own expiry only briefly.
 */
export const oauthConsentDecisions = pgTable("oauth_consent_decisions", {
  request_id: text("request_id").primaryKey(),
  decided_at: timestampColumn("decided_at").notNull(),
  expires_at: timestampColumn("expires_at").notNull(),
});
