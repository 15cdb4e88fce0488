import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { clientIp } from "../../http/rate-limit";
import { hmacSha256 } from "../../lib/crypto";
import { ClientMetadataDocuments } from "./client-metadata";
import { authorizationServerMetadata, AUTHORIZATION_SERVER_PATH, isLoopbackHttp, protectedResourceMetadata, PROTECTED_RESOURCE_PATH, publicOrigin } from "./metadata";
import {
  AuthorizationRequestModel,
  AuthorizationRequestQuery,
  AuthorizeQuery,
  ConnectionListQuery,
  ConnectionModel,
  DecisionBody,
  DecisionModel,
  OAuthErrorModel,
  RegisteredClient,
  RegistrationBody,
} from "./model";
import * as oauth from "./service";

/** The endpoints that take OAuth's form bodies. */
export const OAUTH_FORM_PATHS = ["/token", "/revoke"] as const;

/** Token answers must never be cached (RFC 6749 §5.1). */
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * An authorization refused: said to the person in the browser, never sent to the client's
 * redirect URI (no client here is trusted with an automatic redirect).
 */
function errorPage(message: string): Response {
  const html = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Connection refused</title><body style="font-family:system-ui;max-width:40rem;margin:4rem auto"><h1>This assistant cannot connect</h1><p>${escapeHtml(message)}</p><p>Close this window and start the connection again from the assistant.</p></body></html>`;
  return new Response(html, {
    status: 400,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'", "x-frame-options": "DENY" },
  });
}

/** What the OAuth services share for the app's life: the signing key, the secret box, the client documents and whether PUBLIC_URL is loopback http. */
function serviceContext({ services, mcp, config, secrets }: AppContext, documents: ClientMetadataDocuments): oauth.OAuthServiceContext {
  return {
    ...services,
    directory: mcp.keys,
    // Pending requests are signed with a key derived from the JWT secret, never the secret itself.
    signingKey: hmacSha256(config.jwtSecret, "oauth-authorization-request"),
    secrets,
    documents,
    loopbackService: () => config.publicUrl !== undefined && isLoopbackHttp(config.publicUrl),
  };
}

/**
 * The service as the OAuth 2.1 authorization server of its own MCP endpoint: discovery
 * metadata, dynamic registration, the authorization endpoint (which hands the decision to the
 * console's consent page), tokens and revocation. The protocol endpoints answer OAuth's own
 * error format; they are described by the metadata documents rather than the API document,
 * except registration, whose body is JSON.
 */
export const oauthModule = (context: AppContext, documents = new ClientMetadataDocuments(context.clock)) => {
  const { config, rateLimits } = context;
  const ctx = serviceContext(context, documents);
  const hidden = { detail: { hide: true } } as const;
  const app = new Elysia({ name: "oauth" });
  for (const path of [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}/mcp`]) app.get(path, ({ request }) => protectedResourceMetadata(publicOrigin(config, request)), hidden);
  for (const path of [AUTHORIZATION_SERVER_PATH, "/.well-known/openid-configuration"]) app.get(path, ({ request }) => authorizationServerMetadata(publicOrigin(config, request)), hidden);
  return app
    .get(
      "/authorize",
      async ({ query, request, server, set, redirect }) => {
        Object.assign(set.headers, rateLimits.admitOAuthCall(clientIp(server, request)));
        const origin = publicOrigin(config, request);
        const start = await oauth.startAuthorization(ctx, query, origin);
        if (start.kind === "error-page") return errorPage(start.message);
        return redirect(`${origin}/#/oauth/consent?request=${start.request}`, 302);
      },
      { query: AuthorizeQuery, ...hidden },
    )
    .post(
      "/token",
      async ({ body, request, server, set, status }) => {
        Object.assign(set.headers, NO_STORE);
        Object.assign(set.headers, rateLimits.admitOAuthCall(clientIp(server, request)));
        const form = (body ?? {}) as Record<string, string | undefined>;
        const origin = publicOrigin(config, request);
        try {
          if (form.grant_type === "authorization_code") return await oauth.exchangeCode(ctx, form, origin);
          if (form.grant_type === "refresh_token") return await oauth.refreshTokens(ctx, form, origin);
          throw new oauth.OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
        } catch (error) {
          if (error instanceof oauth.OAuthError) return status(error.status as 400, error.body);
          throw error;
        }
      },
      hidden,
    )
    .post(
      "/revoke",
      async ({ body, request, server, set, status }) => {
        Object.assign(set.headers, NO_STORE);
        Object.assign(set.headers, rateLimits.admitOAuthCall(clientIp(server, request)));
        try {
          await oauth.revokeToken(ctx, (body as Record<string, string | undefined> | undefined)?.token);
          return status(200, "");
        } catch (error) {
          if (error instanceof oauth.OAuthError) return status(error.status as 400, error.body);
          throw error;
        }
      },
      hidden,
    )
    .post(
      "/register",
      async ({ body, request, server, set, status }) => {
        Object.assign(set.headers, NO_STORE);
        Object.assign(set.headers, rateLimits.admitOAuthCall(clientIp(server, request)));
        try {
          return status(201, (await oauth.registerClient(ctx, body)) as typeof RegisteredClient.static);
        } catch (error) {
          if (error instanceof oauth.OAuthError) return status(400, error.body);
          throw error;
        }
      },
      {
        body: RegistrationBody,
        response: { 201: RegisteredClient, 400: OAuthErrorModel, ...errorResponses(413, 422, 429) },
        detail: { tags: ["mcp"], summary: "OAuth dynamic client registration (RFC 7591) for MCP clients; public clients only", "x-rate-limited": true },
      },
    );
};

/** The consent page's calls and the owner's list of connections. */
export const mcpConnectionsModule = (context: AppContext) => {
  const { auth, services, paginator, config } = context;
  const ctx = serviceContext(context, new ClientMetadataDocuments(context.clock));
  return new Elysia({ prefix: "/mcp", tags: ["mcp keys"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .get("/authorization-requests", ({ query }) => oauth.describeRequest(ctx, query.request), {
      query: AuthorizationRequestQuery,
      response: { 200: AuthorizationRequestModel, ...errorResponses(401, 403, 409, 422) },
      detail: { summary: "What an assistant asks for, as the consent page shows it" },
    })
    .post(
      "/authorization-requests/decision",
      ({ actor, body, request }) => oauth.decide(ctx, actor.clinicId, actor.userId, body, publicOrigin(config, request)),
      {
        body: DecisionBody,
        response: { 200: DecisionModel, ...errorResponses(401, 403, 409, 422) },
        detail: { summary: "Approve (with the scopes and daily quota ticked) or deny an assistant's connection; each request is decided once" },
      },
    )
    .get(
      "/connections",
      ({ actor, query }) =>
        paginator.records(query, { keyset: oauth.CONNECTION_KEYSET, page: (page) => oauth.listConnections(services, actor.clinicId, page), changes: oauth.CONNECTION_CHANGES, changedSince: (since, page) => oauth.connectionChanges(services, actor.clinicId, since, page) }, oauth.connectionView),
      { query: ConnectionListQuery, response: { 200: CursorPage(withDeletedAt(ConnectionModel)), ...errorResponses(400, 401, 403, 422) }, detail: { summary: "Assistants connected through OAuth" } },
    )
    .delete(
      "/connections/:id",
      async ({ actor, params, status }) => {
        await oauth.endConnection(ctx, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) }, detail: { summary: "End a connection; its tokens stop at once on every instance" } },
    );
};
