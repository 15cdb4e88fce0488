import { and, eq, isNull, lt } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { changedSince, changesKeyset, pageOf } from "../../db/clinic-records";
import { keyset, type Page, type PageRequest } from "../../db/keyset";
import { clinics, oauthAuthorizationCodes, oauthClients, oauthConnections, oauthTokens, type ApiKeyScope, type OAuthTokenKind } from "../../db/schema";
import { hmacSha256, newId, randomAlphanumeric, safeEqual, sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { serialize } from "../../lib/time";
import { burstFor, type ApiKeyDirectory } from "../mcp-keys/directory";
import { ClientRefused, fetchClientMetadata, isMetadataDocumentId, type OAuthClient } from "./client-metadata";
import { isLoopbackHttp, mcpResource, OAUTH_SCOPES } from "./metadata";
import { onlyLoopback, redirectUriMatches, redirectUriProblem } from "./redirect-uris";

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 86_400;
export const CODE_TTL_SECONDS = 120;
/** A rotated refresh token still works this long: assistants refresh from several places at once. */
export const REFRESH_GRACE_SECONDS = 60;
/** How long the owner has to decide on the consent page. */
export const AUTHORIZATION_REQUEST_TTL_SECONDS = 15 * 60;
export const DEFAULT_CONNECTION_QUOTA = 1000;

/** An RFC 6749 error answer of the token, registration and revocation endpoints. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
  get body() {
    return { error: this.error, error_description: this.description };
  }
}

/** Connection changes reach the key directory (every instance's cache) through the service. */
export interface OAuthServiceContext extends ServiceContext {
  directory: Pick<ApiKeyDirectory, "keyChanged">;
  /** Signs pending authorization requests (derived from the JWT secret). */
  signingKey: string;
}

const isScope = (value: string): value is ApiKeyScope => (OAUTH_SCOPES as readonly string[]).includes(value);

/* ---------------------------------------------------------------- registration (RFC 7591) */

export interface RegistrationInput {
  redirect_uris: string[];
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  scope?: string;
  grant_types?: string[];
  response_types?: string[];
  token_endpoint_auth_method?: string;
  software_id?: string;
  software_version?: string;
}

/** Registers a public client; the answer leaves out the optional fields it was not given. */
export async function registerClient(ctx: ServiceContext, input: RegistrationInput) {
  for (const uri of input.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError("invalid_redirect_uri", problem);
  }
  if (input.token_endpoint_auth_method && input.token_endpoint_auth_method !== "none") {
    throw new OAuthError("invalid_client_metadata", "Only public clients are registered here: token_endpoint_auth_method must be none (PKCE protects the code)");
  }
  const grants = input.grant_types ?? ["authorization_code", "refresh_token"];
  if (grants.some((grant) => grant !== "authorization_code" && grant !== "refresh_token")) throw new OAuthError("invalid_client_metadata", "grant_types may hold only authorization_code and refresh_token");
  if ((input.response_types ?? ["code"]).some((type) => type !== "code")) throw new OAuthError("invalid_client_metadata", "response_types may hold only code");
  const now = ctx.clock.now();
  const clientId = `mcp_client_${randomAlphanumeric(24)}`;
  const metadata: Record<string, unknown> = {
    client_id: clientId,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    redirect_uris: input.redirect_uris,
    grant_types: grants,
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  for (const field of ["client_name", "client_uri", "logo_uri", "scope", "software_id", "software_version"] as const) {
    if (input[field] !== undefined) metadata[field] = input[field];
  }
  await ctx.db.insert(oauthClients).values({ id: newId(), client_id: clientId, client_name: input.client_name ?? null, redirect_uris: input.redirect_uris, metadata, created_at: now });
  return metadata;
}

/** A client by id: one registered here, or a Client ID Metadata Document fetched now. */
async function findClient(ctx: ServiceContext, clientId: string, origin: string): Promise<OAuthClient> {
  if (isMetadataDocumentId(clientId)) return fetchClientMetadata(clientId, isLoopbackHttp(origin));
  const [row] = await ctx.db.select().from(oauthClients).where(eq(oauthClients.client_id, clientId)).limit(1);
  if (!row) throw new ClientRefused(`No client is registered with the id ${clientId}`);
  return { clientId, clientName: row.client_name ?? "An unnamed MCP client", redirectUris: row.redirect_uris };
}

/* ---------------------------------------------------------------- authorization */

/** What the owner decides on, carried signed through the console (no server state before approval). */
export interface AuthorizationRequest {
  client_id: string;
  client_name: string;
  redirect_uri: string;
  code_challenge: string;
  state: string;
  scopes: ApiKeyScope[];
  loopback_only: boolean;
  /** Milliseconds since the epoch. */
  expires: number;
}

function sealRequest(key: string, request: AuthorizationRequest): string {
  const payload = Buffer.from(JSON.stringify(request)).toString("base64url");
  return `${payload}.${hmacSha256(key, payload)}`;
}

export function openRequest(ctx: OAuthServiceContext, sealed: string): AuthorizationRequest {
  const [payload, signature] = sealed.split(".");
  const refused = (message: string) => AppError.validation([{ path: "body.request", message }]);
  if (!payload || !signature || !safeEqual(signature, hmacSha256(ctx.signingKey, payload))) throw refused("The authorization request is not one this service issued");
  const request = JSON.parse(Buffer.from(payload, "base64url").toString()) as AuthorizationRequest;
  if (request.expires <= ctx.clock.now().getTime()) throw refused("The authorization request has expired: start the connection again from the assistant");
  return request;
}

/** Whether `resource` names this server's MCP endpoint: its origin, with or without `/mcp` and a trailing slash. */
export function resourceMatches(resource: string | undefined, origin: string): boolean {
  if (resource === undefined) return true;
  const trimmed = resource.replace(/\/+$/, "");
  return trimmed === origin || trimmed === mcpResource(origin);
}

const CODE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;

/** Where GET /authorize leads: the consent page, an error back to the client, or an error page when the client cannot be trusted with a redirect. */
export type AuthorizationStart = { kind: "consent"; request: string } | { kind: "redirect"; location: string } | { kind: "error-page"; message: string };

export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

export async function startAuthorization(ctx: OAuthServiceContext, query: Record<string, string | undefined>, origin: string): Promise<AuthorizationStart> {
  if (!query.client_id) return { kind: "error-page", message: "The request names no client_id." };
  let client: OAuthClient;
  try {
    client = await findClient(ctx, query.client_id, origin);
  } catch (error) {
    if (error instanceof ClientRefused) return { kind: "error-page", message: error.message };
    throw error;
  }
  const redirectUri = query.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri) return { kind: "error-page", message: "The request names no redirect_uri." };
  if (!redirectUriMatches(client.redirectUris, redirectUri)) return { kind: "error-page", message: `The redirect URI ${redirectUri} is not registered for ${client.clientName}.` };
  const fail = (error: string, description: string): AuthorizationStart => ({
    kind: "redirect",
    location: redirectWith(redirectUri, { error, error_description: description, state: query.state, iss: origin }),
  });
  if (query.response_type !== "code") return fail("unsupported_response_type", "response_type must be code");
  if (!query.code_challenge || !CODE_CHALLENGE.test(query.code_challenge)) return fail("invalid_request", "PKCE is required: send a code_challenge (43 to 128 characters)");
  if (query.code_challenge_method !== "S256") return fail("invalid_request", "code_challenge_method must be S256");
  if (!query.state) return fail("invalid_request", "state is required");
  if (!resourceMatches(query.resource, origin)) return fail("invalid_target", `resource must be ${mcpResource(origin)}`);
  const asked = (query.scope ?? "").split(" ").filter(isScope);
  const request: AuthorizationRequest = {
    client_id: client.clientId,
    client_name: client.clientName,
    redirect_uri: redirectUri,
    code_challenge: query.code_challenge,
    state: query.state,
    scopes: asked.length ? [...new Set(asked)] : [...OAUTH_SCOPES],
    loopback_only: onlyLoopback([redirectUri]),
    expires: ctx.clock.now().getTime() + AUTHORIZATION_REQUEST_TTL_SECONDS * 1000,
  };
  return { kind: "consent", request: sealRequest(ctx.signingKey, request) };
}

/** What the consent page shows. */
export function describeRequest(ctx: OAuthServiceContext, sealed: string) {
  const request = openRequest(ctx, sealed);
  return {
    client_id: request.client_id,
    client_name: request.client_name,
    redirect_host: new URL(request.redirect_uri).host || new URL(request.redirect_uri).protocol,
    loopback_only: request.loopback_only,
    requested_scopes: request.scopes,
    scopes_supported: [...OAUTH_SCOPES],
    default_rate_limit_per_day: DEFAULT_CONNECTION_QUOTA,
  };
}

export interface Decision {
  request: string;
  approve: boolean;
  scopes?: ApiKeyScope[];
  rate_limit_per_day?: number;
}

/** The owner's answer: where the browser goes next (the client's redirect URI, with a code or access_denied). */
export async function decide(ctx: OAuthServiceContext, clinicId: string, userId: string, decision: Decision, origin: string): Promise<{ redirect_to: string }> {
  const request = openRequest(ctx, decision.request);
  if (!decision.approve) return { redirect_to: redirectWith(request.redirect_uri, { error: "access_denied", error_description: "The clinic's owner denied the connection", state: request.state, iss: origin }) };
  const scopes = [...new Set(decision.scopes ?? [])];
  if (!scopes.length) throw AppError.validation([{ path: "body.scopes", message: "Tick at least one scope to approve" }]);
  const code = `mac_${randomAlphanumeric(40)}`;
  const now = ctx.clock.now();
  // Codes are kept a day past their expiry (a replay is recognised and ends what it gave), then dropped.
  await ctx.db.delete(oauthAuthorizationCodes).where(lt(oauthAuthorizationCodes.expires_at, new Date(now.getTime() - 86_400_000)));
  await ctx.db.insert(oauthAuthorizationCodes).values({
    code_hash: sha256Hex(code),
    clinic_id: clinicId,
    client_id: request.client_id,
    client_name: request.client_name,
    redirect_uri: request.redirect_uri,
    scopes,
    rate_limit_per_day: decision.rate_limit_per_day ?? DEFAULT_CONNECTION_QUOTA,
    approved_by: userId,
    code_challenge: request.code_challenge,
    expires_at: new Date(now.getTime() + CODE_TTL_SECONDS * 1000),
    created_at: now,
  });
  return { redirect_to: redirectWith(request.redirect_uri, { code, state: request.state, iss: origin }) };
}

/* ---------------------------------------------------------------- tokens */

export interface TokenAnswer {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

async function issueTokens(ctx: ServiceContext, connectionId: string, scopes: readonly string[]): Promise<TokenAnswer> {
  const now = ctx.clock.now();
  // Each issue clears the connection's expired tokens, so a connection keeps only its live ones.
  await ctx.db.delete(oauthTokens).where(and(eq(oauthTokens.connection_id, connectionId), lt(oauthTokens.expires_at, now)));
  const access = `mat_${randomAlphanumeric(40)}`;
  const refresh = `mrt_${randomAlphanumeric(40)}`;
  const row = (kind: OAuthTokenKind, value: string, ttl: number) => ({ id: newId(), connection_id: connectionId, kind, token_hash: sha256Hex(value), expires_at: new Date(now.getTime() + ttl * 1000), created_at: now });
  await ctx.db.insert(oauthTokens).values([row("access", access, ACCESS_TOKEN_TTL_SECONDS), row("refresh", refresh, REFRESH_TOKEN_TTL_SECONDS)]);
  return { access_token: access, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_SECONDS, refresh_token: refresh, scope: scopes.join(" ") };
}

/** Ends a connection: its tokens stop at once here and, through the key directory's notice, on every instance. */
async function endConnectionById(ctx: OAuthServiceContext, connectionId: string): Promise<void> {
  const now = ctx.clock.now();
  await ctx.db.update(oauthConnections).set({ revoked_at: now, updated_at: now }).where(and(eq(oauthConnections.id, connectionId), isNull(oauthConnections.revoked_at)));
  await ctx.db.delete(oauthTokens).where(eq(oauthTokens.connection_id, connectionId));
  await ctx.directory.keyChanged(connectionId);
}

const pkceChallenge = (verifier: string) => new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");

export async function exchangeCode(ctx: OAuthServiceContext, form: Record<string, string | undefined>, origin: string): Promise<TokenAnswer> {
  const { code, code_verifier: verifier, redirect_uri: redirectUri, client_id: clientId } = form;
  if (!code || !verifier || !redirectUri || !clientId) throw new OAuthError("invalid_request", "code, code_verifier, redirect_uri and client_id are required");
  if (!resourceMatches(form.resource, origin)) throw new OAuthError("invalid_target", `resource must be ${mcpResource(origin)}`);
  const now = ctx.clock.now();
  const hash = sha256Hex(code);
  const [claimed] = await ctx.db
    .update(oauthAuthorizationCodes)
    .set({ used_at: now })
    .where(and(eq(oauthAuthorizationCodes.code_hash, hash), isNull(oauthAuthorizationCodes.used_at)))
    .returning();
  if (!claimed) {
    // A code presented twice may have been stolen: what it gave stops working (OAuth 2.1 §4.1.3).
    const [used] = await ctx.db.select({ connectionId: oauthAuthorizationCodes.connection_id }).from(oauthAuthorizationCodes).where(eq(oauthAuthorizationCodes.code_hash, hash));
    if (used?.connectionId) await endConnectionById(ctx, used.connectionId);
    throw new OAuthError("invalid_grant", used ? "The authorization code has already been used" : "The authorization code is not valid");
  }
  if (claimed.expires_at <= now) throw new OAuthError("invalid_grant", "The authorization code has expired");
  if (claimed.client_id !== clientId || claimed.redirect_uri !== redirectUri) throw new OAuthError("invalid_grant", "The code was issued to another client or redirect URI");
  if (!safeEqual(pkceChallenge(verifier), claimed.code_challenge)) throw new OAuthError("invalid_grant", "The code_verifier does not match the code_challenge");
  const connectionId = newId();
  await ctx.db.insert(oauthConnections).values({
    id: connectionId,
    clinic_id: claimed.clinic_id,
    client_id: claimed.client_id,
    client_name: claimed.client_name,
    redirect_uri: claimed.redirect_uri,
    scopes: claimed.scopes,
    rate_limit_per_day: claimed.rate_limit_per_day,
    created_by: claimed.approved_by,
    created_at: now,
    updated_at: now,
  });
  await ctx.db.update(oauthAuthorizationCodes).set({ connection_id: connectionId }).where(eq(oauthAuthorizationCodes.code_hash, hash));
  return issueTokens(ctx, connectionId, claimed.scopes);
}

export async function refreshTokens(ctx: OAuthServiceContext, form: Record<string, string | undefined>, origin: string): Promise<TokenAnswer> {
  const value = form.refresh_token;
  if (!value) throw new OAuthError("invalid_request", "refresh_token is required");
  if (!resourceMatches(form.resource, origin)) throw new OAuthError("invalid_target", `resource must be ${mcpResource(origin)}`);
  const now = ctx.clock.now();
  const [found] = await ctx.db
    .select({ token: oauthTokens, connection: oauthConnections })
    .from(oauthTokens)
    .innerJoin(oauthConnections, eq(oauthConnections.id, oauthTokens.connection_id))
    .where(and(eq(oauthTokens.token_hash, sha256Hex(value)), eq(oauthTokens.kind, "refresh")))
    .limit(1);
  if (!found || found.connection.revoked_at) throw new OAuthError("invalid_grant", "The refresh token is not valid");
  const { token, connection } = found;
  if (form.client_id && form.client_id !== connection.client_id) throw new OAuthError("invalid_grant", "The refresh token was issued to another client");
  if (token.expires_at <= now) throw new OAuthError("invalid_grant", "The refresh token has expired");
  const asked = form.scope?.split(" ").filter(Boolean) ?? [];
  if (asked.some((scope) => !(connection.scopes as string[]).includes(scope))) throw new OAuthError("invalid_scope", `The connection was granted only: ${connection.scopes.join(" ")}`);
  if (token.rotated_at === null) {
    const [rotated] = await ctx.db.update(oauthTokens).set({ rotated_at: now }).where(and(eq(oauthTokens.id, token.id), isNull(oauthTokens.rotated_at))).returning({ at: oauthTokens.rotated_at });
    if (rotated) return issueTokens(ctx, connection.id, connection.scopes);
  } else if (now.getTime() - token.rotated_at.getTime() > REFRESH_GRACE_SECONDS * 1000) {
    // A refresh token replayed after its grace window: someone else holds the chain, so it ends.
    await endConnectionById(ctx, connection.id);
    throw new OAuthError("invalid_grant", "The refresh token was already used; the connection has been ended for safety");
  }
  return issueTokens(ctx, connection.id, connection.scopes);
}

/** RFC 7009: revoking any token of a connection ends the connection; unknown tokens are fine. */
export async function revokeToken(ctx: OAuthServiceContext, token: string | undefined): Promise<void> {
  if (!token) throw new OAuthError("invalid_request", "token is required");
  const [found] = await ctx.db.select({ connectionId: oauthTokens.connection_id }).from(oauthTokens).where(eq(oauthTokens.token_hash, sha256Hex(token))).limit(1);
  if (found) await endConnectionById(ctx, found.connectionId);
}

/* ---------------------------------------------------------------- connections (owner) */

type ConnectionRow = typeof oauthConnections.$inferSelect;
export const CONNECTION_KEYSET = keyset<ConnectionRow & { burst_per_minute: number }>("mcp_connections", [oauthConnections.created_at, oauthConnections.id]);

export function connectionView(row: ConnectionRow & { burst_per_minute: number }) {
  return serialize({
    id: row.id,
    client_id: row.client_id,
    client_name: row.client_name,
    redirect_host: URL.parse(row.redirect_uri)?.host || row.redirect_uri,
    scopes: row.scopes,
    rate_limit_per_day: row.rate_limit_per_day,
    burst_per_minute: row.burst_per_minute,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  });
}

export async function listConnections(ctx: ServiceContext, clinicId: string, page: PageRequest) {
  return withBurst(ctx, clinicId, await pageOf<ConnectionRow>(ctx.db, oauthConnections, [eq(oauthConnections.clinic_id, clinicId)], page, CONNECTION_KEYSET));
}

/** Delta sync: connections made or ended after `since` (an ended one is revoked, never deleted). */
export const CONNECTION_CHANGES = changesKeyset<ConnectionRow & { burst_per_minute: number }>(oauthConnections);
export async function connectionChanges(ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) {
  return withBurst(ctx, clinicId, await changedSince<ConnectionRow>(ctx.db, oauthConnections, clinicId, since, page, CONNECTION_CHANGES as never));
}

async function withBurst(ctx: ServiceContext, clinicId: string, found: Page<ConnectionRow>) {
  const [clinic] = await ctx.db.select({ plan: clinics.plan, burst: clinics.burst_per_minute }).from(clinics).where(eq(clinics.id, clinicId));
  const burst = burstFor(clinic!.plan, clinic!.burst);
  return { ...found, rows: found.rows.map((row) => ({ ...row, burst_per_minute: burst })) };
}

/** Ending twice is harmless. */
export async function endConnection(ctx: OAuthServiceContext, clinicId: string, id: string): Promise<void> {
  const [row] = await ctx.db.select({ id: oauthConnections.id }).from(oauthConnections).where(and(eq(oauthConnections.clinic_id, clinicId), eq(oauthConnections.id, id)));
  if (!row) throw AppError.notFound("MCP connection", id);
  await endConnectionById(ctx, id);
}
