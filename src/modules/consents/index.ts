import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { ConsentRecordModel, ConsentsModel, RecordConsentBody } from "./model";
import * as consents from "./service";

/** A tutor's consent to be contacted, per channel and purpose: every staff member records what the tutor says. */
export const consentsModule = ({ auth, services }: AppContext) =>
  new Elysia({ prefix: "/tutors", tags: ["consents"] as never })
    .use(auth)
    .guard({ auth: true })
    .post(
      "/:id/consents",
      async ({ actor, params, body, status }) =>
        status(201, await consents.recordForTutor(services, actor.clinicId, params.id, { ...body, source: body.source ?? "console", recordedBy: actor.userId })),
      {
        params: IdParams,
        body: RecordConsentBody,
        response: { 201: ConsentRecordModel, ...errorResponses(401, 404, 422) },
        detail: { summary: "Record that the tutor agrees to (or withdraws from) being contacted on a channel for a purpose; the latest record decides" },
      },
    )
    .get("/:id/consents", ({ actor, params }) => consents.consentsOf(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: ConsentsModel, ...errorResponses(401, 404, 422) },
      detail: { summary: "The tutor's standing consent per channel and purpose, and the whole history" },
    });
