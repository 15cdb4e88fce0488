import { and, count, eq, isNull } from "drizzle-orm";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { clinics, users } from "../../db/schema";
import { errorResponses, IdParams } from "../../http/common-model";
import { CreatedInvitationModel, CreateInvitationBody, InstallModel, InvitationModel } from "./model";
import { createInvitation, listInvitations, revokeInvitation } from "./invitations";

/**
 * What acts on the whole install rather than one clinic, for install administrators only: its
 * settings as the server runs them, and invitations to open a clinic (REGISTRATION=invite).
 */
export const installModule = ({ auth, services, config, database }: AppContext) =>
  new Elysia({ prefix: "/admin", tags: ["admin"] as never })
    .use(auth)
    .guard({ auth: "admin" as const })
    .get(
      "/install",
      async () => {
        const [userCount] = await services.db.select({ n: count() }).from(users).where(isNull(users.deleted_at));
        const [clinicCount] = await services.db.select({ n: count() }).from(clinics);
        const administrators = await services.db
          .select({ id: users.id, email: users.email, name: users.name, clinic_id: users.clinic_id })
          .from(users)
          .where(and(eq(users.is_admin, true), isNull(users.deleted_at)));
        return {
          registration: config.registration,
          cookie_secure: config.cookieSecure,
          public_url: config.publicUrl ?? null,
          database: database.kind === "postgres" ? "postgres" : "embedded",
          users: Number(userCount?.n ?? 0),
          clinics: Number(clinicCount?.n ?? 0),
          administrators,
        };
      },
      { response: { 200: InstallModel, ...errorResponses(401, 403) }, detail: { summary: "The install as this server runs it: registration policy, cookies, administrators" } },
    )
    .post(
      "/invitations",
      async ({ actor, body, request, status }) => {
        const { invitation, token } = await createInvitation(services, actor.userId, body.note);
        const origin = config.publicUrl ?? new URL(request.url).origin;
        return status(201, { ...invitation, token, url: `${origin}/join#${token}` });
      },
      {
        body: CreateInvitationBody,
        response: { 201: CreatedInvitationModel, ...errorResponses(401, 403, 422) },
        detail: { summary: "Create a single-use invitation to open a clinic (valid 7 days; REGISTRATION=invite)" },
      },
    )
    .get("/invitations", () => listInvitations(services), {
      response: { 200: t.Array(InvitationModel), ...errorResponses(401, 403) },
      detail: { summary: "The invitations, newest first (the latest 200)" },
    })
    .delete(
      "/invitations/:id",
      async ({ params, status }) => {
        await revokeInvitation(services, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404) }, detail: { summary: "Revoke an invitation not yet used" } },
    );
