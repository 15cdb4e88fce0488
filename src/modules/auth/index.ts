import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { ACCESS_TOKEN_TTL_SECONDS } from "../../http/access-token";
import { TrustedProxies } from "../../http/rate-limit";
import { ChangePasswordBody, LoginBody, MeModel, RegisterBody, SessionModel, SetupBody, SetupStateModel } from "./model";
import * as auth from "./service";
import { normalizeEmail } from "../users/service";
import { AppError } from "../../lib/errors";

export const REFRESH_COOKIE = "service_refresh";

export const authModule = (app: AppContext) => {
  const { services, rateLimits, config, setup } = app;
  const proxies = new TrustedProxies(config.trustedProxies);
  /**
   * The refresh cookie's attributes. `Secure` follows COOKIE_SECURE; with `auto`, it is set when
   * the browser spoke https (a `Secure` cookie sent over plain http on the clinic's LAN would be
   * dropped, signing everyone out at each reload).
   */
  const cookieOptionsFor = (server: Parameters<TrustedProxies["isHttps"]>[0], request: Request) => ({
    httpOnly: true,
    sameSite: "strict" as const,
    path: "/api/v1/auth",
    secure: config.cookieSecure === "auto" ? proxies.isHttps(server, request) : config.cookieSecure,
  });
  return new Elysia({ prefix: "/auth", tags: ["auth"] as never })
    .use(app.auth)
    .model({ Session: SessionModel })
    .resolve(({ cookie, signAccessToken, server, request }) => ({
      /** Turns a service session into the response body and the rotated refresh cookie. */
      startSession: async (session: auth.Session) => {
        cookie[REFRESH_COOKIE]!.set({ value: session.refreshToken, maxAge: auth.REFRESH_TOKEN_TTL_MS / 1000, ...cookieOptionsFor(server, request) });
        const access_token = await signAccessToken({ sub: session.user.id, clinic_id: session.clinic.id, role: session.user.role });
        return { access_token, token_type: "Bearer" as const, expires_in: ACCESS_TOKEN_TTL_SECONDS, user: session.user, clinic: session.clinic };
      },
    }))
    .post(
      "/register",
      async ({ body, request, server, set, status, startSession }) => {
        Object.assign(set.headers, rateLimits.admitAuthAttempt(proxies.clientIp(server, request)));
        if (config.registration === "closed") throw new AppError("REGISTRATION_CLOSED", "This server does not take registrations; its administrator adds clinics");
        if (config.registration === "invite" && body.invitation === undefined) throw new AppError("REGISTRATION_CLOSED", "This server registers clinics by invitation only; open the invitation link you were sent");
        const { invitation, ...input } = body;
        return status(201, await startSession(await auth.register(services, input, { invitation })));
      },
      {
        body: RegisterBody,
        response: { 201: SessionModel, ...errorResponses(400, 403, 409, 413, 422, 429) },
        detail: { summary: "Create a clinic and its owner (when the server's REGISTRATION allows it)", "x-rate-limited": true, "x-session-cookie": true, "x-statuses": { "403": "REGISTRATION_CLOSED: REGISTRATION is closed, or invite and the invitation is missing, used or expired" } },
      },
    )
    .get("/setup", async () => ({ needed: !(await auth.hasAnyUser(services)), registration: config.registration }), {
      response: { 200: SetupStateModel },
      detail: { summary: "Whether the install still needs its first account (the sign-in page says how to get the setup link)" },
    })
    .post(
      "/setup",
      async ({ body, request, server, set, status, startSession }) => {
        Object.assign(set.headers, rateLimits.admitAuthAttempt(proxies.clientIp(server, request)));
        const { token, ...input } = body;
        const taken = setup.take(token);
        if (!taken) throw new AppError("FORBIDDEN", "This setup link is not valid: it was used, has expired (an hour after the server started) or is not this server's; restart the server for a new one");
        try {
          return status(201, await startSession(await auth.register(services, { ...input, timezone: input.timezone ?? "America/Santiago" }, { onlyIfEmpty: true })));
        } catch (error) {
          taken.release();
          throw error;
        }
      },
      {
        body: SetupBody,
        response: { 201: SessionModel, ...errorResponses(400, 403, 409, 413, 422, 429) },
        detail: {
          summary: "First run: create the clinic and its owner (the install's first administrator) with the setup link's token",
          "x-rate-limited": true,
          "x-session-cookie": true,
          "x-statuses": { "403": "FORBIDDEN: the token is not the live setup token, or the install already has a user" },
        },
      },
    )
    .post(
      "/login",
      async ({ body, request, server, set, startSession }) => {
        const ip = proxies.clientIp(server, request);
        Object.assign(set.headers, rateLimits.admitAuthAttempt(ip));
        const email = normalizeEmail(body.email);
        rateLimits.assertLoginAllowed(email, ip);
        try {
          const session = await startSession(await auth.login(services, body));
          rateLimits.recordLoginSuccess(email, ip);
          return session;
        } catch (error) {
          if (error instanceof AppError && error.code === "INVALID_CREDENTIALS") rateLimits.recordLoginFailure(email, ip);
          throw error;
        }
      },
      { body: LoginBody, response: { 200: SessionModel, ...errorResponses(400, 401, 422, 429) }, detail: { summary: "Log in", "x-rate-limited": true, "x-session-cookie": true } },
    )
    .post(
      "/refresh",
      async ({ cookie, startSession }) => startSession(await auth.refresh(services, cookie[REFRESH_COOKIE]?.value as string | undefined)),
      { cookie: t.Cookie({ [REFRESH_COOKIE]: t.Optional(t.String({ maxLength: 200 })) }), response: { 200: SessionModel, ...errorResponses(401) }, detail: { summary: "Rotate the refresh cookie and get a new access token", "x-session-cookie": true } },
    )
    .post(
      "/logout",
      async ({ actor, cookie, status, server, request }) => {
        await auth.logout(services, actor.userId, cookie[REFRESH_COOKIE]?.value as string | undefined);
        cookie[REFRESH_COOKIE]!.set({ value: "", maxAge: 0, ...cookieOptionsFor(server, request) });
        return status(204, undefined);
      },
      { auth: true, response: { 204: t.Void(), ...errorResponses(401) }, detail: { summary: "End the session family and clear the cookie", "x-rate-limited": true, "x-session-cookie": true } },
    )
    .post(
      "/password",
      async ({ actor, body, cookie, status }) => {
        await auth.changePassword(services, actor.userId, body, cookie[REFRESH_COOKIE]?.value as string | undefined);
        return status(204, undefined);
      },
      {
        auth: true,
        body: ChangePasswordBody,
        response: { 204: t.Void(), ...errorResponses(401, 422) },
        detail: { summary: "Change your own password; your other sessions end, this one stays" },
      },
    )
    .get("/me", ({ actor }) => auth.me(services, actor.userId), {
      auth: true,
      response: { 200: MeModel, ...errorResponses(401) },
      detail: { summary: "The caller and their clinic" },
    });
};
