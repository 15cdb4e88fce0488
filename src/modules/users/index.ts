import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { CreateUserBody, UpdateUserBody, UserListQuery, UserModel } from "./model";
import * as usersService from "./service";


/** Staff management: the clinic owner's alone. */
export const usersModule = ({ auth, services, paginator }: AppContext) =>
  new Elysia({ prefix: "/users", tags: ["users"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .post("/", async ({ actor, body, status }) => status(201, await usersService.createUser(services, actor.clinicId, body)), {
      body: CreateUserBody,
      response: { 201: UserModel, ...errorResponses(401, 403, 409, 422) },
      detail: { summary: "Add a vet or staff member" },
    })
    .get(
      "/",
      ({ actor, query }) =>
        paginator.records(query, { keyset: usersService.userRecords.keyset, page: (page) => usersService.listUsers(services, actor.clinicId, page), changes: usersService.userRecords.changes, changedSince: (since, page) => usersService.userChanges(services, actor.clinicId, since, page) }, usersService.userView),
      { query: UserListQuery, response: { 200: CursorPage(withDeletedAt(UserModel)), ...errorResponses(400, 401, 403, 422) }, detail: { summary: "List the clinic's users" } },
    )
    .get("/:id", ({ actor, params }) => usersService.getUser(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: UserModel, ...errorResponses(401, 403, 404, 422) },
    })
    .patch("/:id", ({ actor, params, body }) => usersService.updateUser(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateUserBody,
      response: { 200: UserModel, ...errorResponses(401, 403, 404, 409, 422) },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await usersService.deleteUser(services, actor.clinicId, actor.userId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 409) } },
    );
