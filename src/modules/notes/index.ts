import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { AddendumModel, CLINICAL_WRITERS, CreateAddendumBody, CreateNoteBody, NoteListQuery, NoteModel, UpdateNoteBody } from "./model";
import * as service from "./service";

/** Consultation notes (SOAP) on visits: drafts, signing, addenda. Vets and the owner write; every role reads signed notes. */
export const notesModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ tags: ["notes"] as never })
    .use(auth)
    .post("/visits/:id/notes", async ({ actor, params, body, status }) => status(201, await service.create(services, actor, params.id, body)), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: CreateNoteBody,
      response: { 201: NoteModel, ...errorResponses(401, 403, 404, 409, 422) },
      detail: { summary: "Start a consultation note (SOAP) on a visit, as a draft of the caller's" },
    })
    .get(
      "/visits/:id/notes",
      ({ actor, params, query }) =>
        paginator.records(query, { keyset: service.noteRecords.keyset, page: (page) => service.listForVisit(services, actor, params.id, page), changes: service.noteRecords.changes, changedSince: (since, page) => service.changesForVisit(services, actor, params.id, since, page) }, service.noteView),
      {
        auth: true,
        params: IdParams,
        query: NoteListQuery,
        response: { 200: CursorPage(withDeletedAt(NoteModel)), ...errorResponses(400, 401, 404, 422) },
        detail: { summary: "A visit's notes with their addenda: signed ones, and drafts only to their author and the owner" },
      },
    )
    .get("/notes/:id", ({ actor, params }) => service.view(services, actor, params.id), {
      auth: true,
      params: IdParams,
      response: { 200: NoteModel, ...errorResponses(401, 403, 404, 422) },
      detail: { summary: "A note with its addenda (a draft only to its author and the owner)" },
    })
    .patch("/notes/:id", ({ actor, params, body }) => service.update(services, actor, params.id, body), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: UpdateNoteBody,
      response: { 200: NoteModel, ...errorResponses(401, 403, 404, 409, 422) },
      detail: { summary: "Edit a draft (its author or the owner); a signed note is 409 NOTE_SIGNED" },
    })
    .delete(
      "/notes/:id",
      async ({ actor, params, status }) => {
        await service.remove(services, actor, params.id);
        return status(204, undefined);
      },
      {
        auth: CLINICAL_WRITERS,
        params: IdParams,
        response: { 204: t.Void(), ...errorResponses(401, 403, 404, 409, 422) },
        detail: { summary: "Withdraw a draft (kept, never erased); a signed note is 409 NOTE_SIGNED" },
      },
    )
    .post("/notes/:id/sign", ({ actor, params }) => service.sign(services, actor, params.id), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      response: { 200: NoteModel, ...errorResponses(401, 403, 404, 409, 422) },
      detail: { summary: "Sign a draft (its author or the owner): final from then on (signed_at, signed_by)" },
    })
    .post("/notes/:id/addenda", async ({ actor, params, body, status }) => status(201, await service.addAddendum(services, actor, params.id, body)), {
      auth: CLINICAL_WRITERS,
      params: IdParams,
      body: CreateAddendumBody,
      response: { 201: AddendumModel, ...errorResponses(401, 403, 404, 409, 422) },
      detail: { summary: "Add an addendum to a signed note (author and time recorded; never edited)" },
    });
