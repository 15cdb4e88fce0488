import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { EraseBody, TutorExportModel } from "./model";
import { eraseTutor, exportTutor } from "./service";

/** The tutor's rights over their data (Ley 21.719): access and portability, and erasure with blocking. Owner only. */
export const tutorRightsModule = ({ auth, database, clock }: AppContext) =>
  new Elysia({ prefix: "/tutors", tags: ["tutors"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .get("/:id/export", ({ actor, params }) => exportTutor({ database, clock }, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: TutorExportModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "Everything held about the tutor and their patients, as one versioned JSON document (access and portability)" },
    })
    .post(
      "/:id/erase",
      async ({ actor, params, body, status }) => {
        await eraseTutor({ database, clock }, actor.clinicId, params.id, body.confirm_name, { type: "user", id: actor.userId, name: actor.name });
        return status(204, undefined);
      },
      {
        params: IdParams,
        body: EraseBody,
        response: { 204: t.Void(), ...errorResponses(401, 403, 404, 409, 422) },
        detail: { summary: "Erase the tutor's personal data (confirmed by typing the name); what the law keeps is blocked" },
      },
    );
