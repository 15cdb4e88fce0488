import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { PageResponse } from "../../http/pagination";
import { CreateTutorBody, TutorListQuery, TutorModel, UpdateTutorBody } from "./model";
import * as tutorsService from "./service";

export const TUTOR_LIST = { list: "tutors", sort: ["created_at:date", "id:text"] } as const;

export const tutorsModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/tutors", tags: ["tutors"] as never })
    .use(auth)
    .guard({ auth: true })
    .get(
      "/",
      async ({ actor, query }) => {
        const page = paginator.request(query, TUTOR_LIST);
        const result = await tutorsService.listTutors(services, actor.clinicId, query, page);
        return paginator.respond(page, result, TUTOR_LIST, tutorsService.tutorView);
      },
      { query: TutorListQuery, response: { 200: PageResponse(TutorModel), ...errorResponses(400, 401, 422) }, detail: { summary: "List tutors (cursor or offset form); q searches names" } },
    )
    .post("/", async ({ actor, body, status }) => status(201, await tutorsService.createTutor(services, actor.clinicId, body)), {
      body: CreateTutorBody,
      response: { 201: TutorModel, ...errorResponses(401, 422) },
    })
    .get("/:id", ({ actor, params }) => tutorsService.getTutor(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: TutorModel, ...errorResponses(401, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }) => tutorsService.updateTutor(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateTutorBody,
      response: { 200: TutorModel, ...errorResponses(401, 404, 422) },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await tutorsService.deleteTutor(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 404, 409, 422) }, detail: { summary: "Soft delete; 409 while open work depends on it (details.blocked_by)" } },
    );
