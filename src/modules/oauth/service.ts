import { and, eq, isNull, lt } from "drizzle-orm";
import type { Db, ServiceContext, Tx } from "../../db/client";
import { changedSince, changesKeyset, pageOf } from "../../db/clinic-records";
import { keyset, type Page, type PageRequest } from "../../db/keyset";
import { clinics, oauthAuthorizationCodes, oauthClients, oauthConnections, oauthConsentDecisions, oauthTokens, type ApiKeyScope, type OAuthTokenKind } from "../../db/schema";
import { hmacSha256, newId, randomAlphanumeric, safeEqual, sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { serialize } from "../../lib/time";
import { burstFor, type ApiKeyDirectory } from "../mcp-keys/directory";
import type { SecretBox } from "../../lib/secrets";
import { ClientRefused, isMetadataDocumentId, type ClientMetadataDocuments, type OAuthClient } from "./client-metadata";
import { mcpResource, OAUTH_SCOPES } from "./metadata";
import { onlyLoopback, redirectTarget, redirectUriMatches, redirectUriProblem } from "./redirect-uris";

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
  /** Seals the answer a refresh token was exchanged for, kept for its grace window. */
  secrets: SecretBox;
  /** Client ID Metadata Documents, fetched at the checked address and kept as HTTP caching allows. */
  documents: ClientMetadataDocuments;
  /** Whether PUBLIC_URL is loopback http (development and tests): only then may a client id be a loopback URL. Never decided from a request. */
  loopbackService: () => boolean;
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

/** The metadata echoed back when sent; every other member of a registration is dropped (RFC 7591 §2). */
const ECHOED_FIELDS = ["client_name", "client_uri", "logo_uri", "scope", "software_id", "software_version"] as const;

/**
 * Registers a public client. What this server does not support is replaced with what it does,
 * and the answer says so (RFC 7591 §3.2.1): a confidential client's auth method becomes `none`
 * (PKCE protects the code; no secret is issued), the grant types become authorization_code and
 * refresh_token, the response types `code`, and scopes outside this server's are left out. Only
 * a redirect URI this server would not send a browser to is refused.
 */
export async function registerClient(ctx: ServiceContext, input: RegistrationInput) {
  for (const uri of input.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError("invalid_redirect_uri", problem);
  }
  const now = ctx.clock.now();
  const clientId = `mcp_client_${randomAlphanumeric(24)}`;
  const metadata: Record<string, unknown> = {
    client_id: clientId,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    redirect_uris: input.redirect_uris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  for (const field of ECHOED_FIELDS) {
    const value = input[field];
    if (typeof value === "string" && value.trim()) metadata[field] = value.trim();
  }
  if (typeof metadata.scope === "string") {
    const known = metadata.scope.split(" ").filter(isScope);
    if (known.length) metadata.scope = [...new Set(known)].join(" ");
    else delete metadata.scope;
  }
  const name = typeof metadata.client_name === "string" ? metadata.client_name : null;
  await ctx.db.insert(oauthClients).values({ id: newId(), client_id: clientId, client_name: name, redirect_uris: input.redirect_uris, metadata, created_at: now });
  return metadata;
}

/** A client by id: one registered here, or a Client ID Metadata Document (fetched, or kept from an earlier fetch). */
async function findClient(ctx: OAuthServiceContext, clientId: string): Promise<OAuthClient> {
  if (isMetadataDocumentId(clientId)) return ctx.documents.find(clientId, ctx.loopbackService());
  const [row] = await ctx.db.select().from(oauthClients).where(eq(oauthClients.client_id, clientId)).limit(1);
  if (!row) throw new ClientRefused(`No client is registered with the id ${clientId}`);
  return { clientId, clientName: row.client_name ?? "An unnamed MCP client", redirectUris: row.redirect_uris, nameVerified: false };
}

/* ---------------------------------------------------------------- authorization */

/** What the owner decides on, carried signed through the console (no server state before the decision). */
export interface AuthorizationRequest {
  /** Random: the decision is recorded under it, so a request is decided once. */
  id: string;
  client_id: string;
  client_name: string;
  client_name_verified: boolean;
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

/**
 * Where GET /authorize leads: the consent page, or an error page. Every client here registered
 * itself (or names itself with its own document), so no redirect URI is trusted before the
 * owner has seen it: an error is said to the person in the browser, never sent to the client's
 * redirect (the authorization server must not be an open redirector, RFC 9700 §4.11.2).
 */
export type AuthorizationStart = { kind: "consent"; request: string } | { kind: "error-page"; message: string };

export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

export async function startAuthorization(ctx: OAuthServiceContext, query: Record<string, string | undefined>, origin: string): Promise<AuthorizationStart> {
  const page = (message: string): AuthorizationStart => ({ kind: "error-page", message });
  if (!query.client_id) return page("The request names no client_id.");
  let client: OAuthClient;
  try {
    client = await findClient(ctx, query.client_id);
  } catch (error) {
    if (error instanceof ClientRefused) return page(error.message);
    throw error;
  }
  const redirectUri = query.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
  if (!redirectUri) return page("The request names no redirect_uri.");
  if (!redirectUriMatches(client.redirectUris, redirectUri)) return page(`The redirect URI ${redirectUri} is not registered for ${client.clientName}.`);
  const unsafe = redirectUriProblem(redirectUri);
  if (unsafe) return page(unsafe);
  if (query.response_type !== "code") return page("The assistant asked for response_type other than code, which this server does not support.");
  if (!query.code_challenge || !CODE_CHALLENGE.test(query.code_challenge)) return page("The assistant sent no valid PKCE code_challenge (43 to 128 characters).");
  if (query.code_challenge_method !== "S256") return page("The assistant's code_challenge_method must be S256.");
  if (!query.state) return page("The assistant sent no state.");
  if (!resourceMatches(query.resource, origin)) return page(`The assistant asked for the resource ${query.resource}; this server's is ${mcpResource(origin)}.`);
  const asked = (query.scope ?? "").split(" ").filter(isScope);
  const request: AuthorizationRequest = {
    id: randomAlphanumeric(24),
    client_id: client.clientId,
    client_name: client.clientName,
    client_name_verified: client.nameVerified,
    redirect_uri: redirectUri,
    code_challenge: query.code_challenge,
    state: query.state,
    scopes: asked.length ? [...new Set(asked)] : [...OAUTH_SCOPES],
    loopback_only: onlyLoopback([redirectUri]),
    expires: ctx.clock.now().getTime() + AUTHORIZATION_REQUEST_TTL_SECONDS * 1000,
  };
  return { kind: "consent", request: sealRequest(ctx.signingKey, request) };
}

const alreadyDecided = () => new AppError("CONFLICT", "This connection request was already decided: start the connection again from the assistant");

/** What the consent page shows; a request already decided is refused. */
export async function describeRequest(ctx: OAuthServiceContext, sealed: string) {
  const request = openRequest(ctx, sealed);
  const [decided] = await ctx.db.select({ id: oauthConsentDecisions.request_id }).from(oauthConsentDecisions).where(eq(oauthConsentDecisions.request_id, request.id));
  if (decided) throw alreadyDecided();
  const target = redirectTarget(request.redirect_uri);
  return {
    client_id: request.client_id,
    client_name: request.client_name,
    client_name_verified: request.client_name_verified,
    redirect_host: target.host || `${target.scheme}:`,
    redirect_scheme: target.scheme,
    redirect_uri: request.redirect_uri,
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

/**
 * The owner's answer, given once per request: where the browser goes next (the redirect URI the
 * owner was shown, with a code or access_denied). A second decision on the same request is a 409.
 */
export async function decide(ctx: OAuthServiceContext, clinicId: string, userId: string, decision: Decision, origin: string): Promise<{ redirect_to: string }> {
  const request = openRequest(ctx, decision.request);
  const scopes = [...new Set(decision.scopes ?? [])];
  if (decision.approve && !scopes.length) throw AppError.validation([{ path: "body.scopes", message: "Tick at least one scope to approve" }]);
  const now = ctx.clock.now();
  // Decisions are kept until their request could no longer be opened, then dropped.
  await ctx.db.delete(oauthConsentDecisions).where(lt(oauthConsentDecisions.expires_at, now));
  const [recorded] = await ctx.db
    .insert(oauthConsentDecisions)
    .values({ request_id: request.id, decided_at: now, expires_at: new Date(request.expires) })
    .onConflictDoNothing()
    .returning({ id: oauthConsentDecisions.request_id });
  if (!recorded) throw alreadyDecided();
  if (!decision.approve) return { redirect_to: redirectWith(request.redirect_uri, { error: "access_denied", error_description: "The clinic's owner denied the connection", state: request.state, iss: origin }) };
  const code = `mac_${randomAlphanumeric(40)}`;
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

/** A minted pair, before it is stored. */
interface MintedTokens {
  answer: TokenAnswer;
  rows: (typeof oauthTokens.$inferInsert)[];
  accessExpiresAt: number;
}

function mintTokens(connectionId: string, scopes: readonly string[], now: Date): MintedTokens {
  const access = `mat_${randomAlphanumeric(40)}`;
  const refresh = `mrt_${randomAlphanumeric(40)}`;
  const row = (kind: OAuthTokenKind, value: string, ttl: number) => ({ id: newId(), connection_id: connectionId, kind, token_hash: sha256Hex(value), expires_at: new Date(now.getTime() + ttl * 1000), created_at: now });
  return {
    answer: { access_token: access, token_type: "Bearer", expires_in: ACCESS_TOKEN_TTL_SECONDS, refresh_token: refresh, scope: scopes.join(" ") },
    rows: [row("access", access, ACCESS_TOKEN_TTL_SECONDS), row("refresh", refresh, REFRESH_TOKEN_TTL_SECONDS)],
    accessExpiresAt: now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000,
  };
}

/** Stores a minted pair; each issue clears the connection's expired tokens, so a connection keeps only its live ones. */
async function storeTokens(db: Db | Tx, connectionId: string, minted: MintedTokens, now: Date): Promise<void> {
  await db.delete(oauthTokens).where(and(eq(oauthTokens.connection_id, connectionId), lt(oauthTokens.expires_at, now)));
  await db.insert(oauthTokens).values(minted.rows);
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
  const minted = mintTokens(connectionId, claimed.scopes, now);
  await storeTokens(ctx.db, connectionId, minted, now);
  return minted.answer;
}

/** What a rotated refresh token keeps, sealed: the answer it was exchanged for. */
interface Successor {
  answer: TokenAnswer;
  accessExpiresAt: number;
}

/**
 * Refresh with rotation, one chain per connection. The first use of a refresh token mints the
 * next pair and keeps that answer (sealed) with the used token, in one transaction; the same
 * token presented again within REFRESH_GRACE_SECONDS gets that same answer (a client that lost
 * the response, or refreshes from two places at once), never a second pair. Presented after the
 * grace window, or when the kept answer cannot be given, it ends the connection: someone else
 * holds the chain. `scope` may narrow the connection's scopes, never widen them.
 */
export async function refreshTokens(ctx: OAuthServiceContext, form: Record<string, string | undefined>, origin: string): Promise<TokenAnswer> {
  const value = form.refresh_token;
  if (!value) throw new OAuthError("invalid_request", "refresh_token is required");
  if (!resourceMatches(form.resource, origin)) throw new OAuthError("invalid_target", `resource must be ${mcpResource(origin)}`);
  const now = ctx.clock.now();
  const hash = sha256Hex(value);
  const find = async () => {
    const [found] = await ctx.db
      .select({ token: oauthTokens, connection: oauthConnections })
      .from(oauthTokens)
      .innerJoin(oauthConnections, eq(oauthConnections.id, oauthTokens.connection_id))
      .where(and(eq(oauthTokens.token_hash, hash), eq(oauthTokens.kind, "refresh")))
      .limit(1);
    return found;
  };
  let found = await find();
  if (!found || found.connection.revoked_at) throw new OAuthError("invalid_grant", "The refresh token is not valid");
  const { connection } = found;
  if (form.client_id && form.client_id !== connection.client_id) throw new OAuthError("invalid_grant", "The refresh token was issued to another client");
  if (found.token.expires_at <= now) throw new OAuthError("invalid_grant", "The refresh token has expired");
  const granted = connection.scopes as string[];
  const asked = [...new Set(form.scope?.split(" ").filter(Boolean) ?? [])];
  if (asked.some((scope) => !granted.includes(scope))) throw new OAuthError("invalid_scope", `The connection was granted only: ${granted.join(" ")}`);
  const scopes = (asked.length ? asked : granted) as ApiKeyScope[];
  if (found.token.rotated_at === null) {
    const minted = mintTokens(connection.id, scopes, now);
    const successor: Successor = { answer: minted.answer, accessExpiresAt: minted.accessExpiresAt };
    const rotated = await ctx.db.transaction(async (tx) => {
      const [claimed] = await tx
        .update(oauthTokens)
        .set({ rotated_at: now, successor: ctx.secrets.seal(JSON.stringify(successor)) })
        .where(and(eq(oauthTokens.id, found!.token.id), isNull(oauthTokens.rotated_at)))
        .returning({ id: oauthTokens.id });
      if (!claimed) return false;
      await storeTokens(tx, connection.id, minted, now);
      if (scopes.length < granted.length) await tx.update(oauthConnections).set({ scopes, updated_at: now }).where(eq(oauthConnections.id, connection.id));
      return true;
    });
    if (rotated) {
      if (scopes.length < granted.length) await ctx.directory.keyChanged(connection.id);
      return minted.answer;
    }
    // Another request rotated it first: answer as a replay of that rotation.
    found = await find();
    if (!found) throw new OAuthError("invalid_grant", "The refresh token is not valid");
  }
  const rotatedAt = found.token.rotated_at!;
  const kept = found.token.successor;
  if (now.getTime() - rotatedAt.getTime() > REFRESH_GRACE_SECONDS * 1000 || !kept) {
    await endConnectionById(ctx, connection.id);
    throw new OAuthError("invalid_grant", "The refresh token was already used; the connection has been ended for safety");
  }
  const successor = JSON.parse(ctx.secrets.open(kept)) as Successor;
  return { ...successor.answer, expires_in: Math.max(0, Math.floor((successor.accessExpiresAt - now.getTime()) / 1000)) };
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
