import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { ApiKeyModel, ApiKeyWithSecretModel, CreateKeyBody, DailyModel, DailyQuery, KeyListQuery, SummaryModel, SummaryQuery, UsageQuery, UsageRowModel } from "./model";
import * as keys from "./service";

/** API keys and their usage: the clinic owner's alone (interface spec, Authentication rule 4). */
export const mcpKeysModule = ({ auth, services, paginator, mcp }: AppContext) => {
  const keyServices: keys.KeyServiceContext = { ...services, directory: mcp.keys };
  // Usage reads flush this instance's queued rows first, so a caller reads its own calls.
  const flushed = async <T>(read: () => Promise<T>) => {
    await mcp.flush();
    return read();
  };
  return new Elysia({ prefix: "/mcp", tags: ["mcp keys"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .post("/keys", async ({ actor, body, status }) => status(201, await keys.createKey(services, actor.clinicId, actor.userId, body)), {
      body: CreateKeyBody,
      response: { 201: ApiKeyWithSecretModel, ...errorResponses(401, 403, 422) },
      detail: { summary: "Create an API key; the value is shown only in this response" },
    })
    .get(
      "/keys",
      ({ actor, query }) =>
        paginator.records(query, { keyset: keys.KEY_KEYSET, page: (page) => keys.listKeys(services, actor.clinicId, page), changes: keys.KEY_CHANGES, changedSince: (since, page) => keys.keyChanges(services, actor.clinicId, since, page) }, keys.keyView),
      { query: KeyListQuery, response: { 200: CursorPage(withDeletedAt(ApiKeyModel)), ...errorResponses(400, 401, 403, 422) } },
    )
    .get("/keys/:id", ({ actor, params }) => keys.getKey(services, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: ApiKeyModel, ...errorResponses(401, 403, 404, 422) },
    })
    .post(
      "/keys/:id/rotate",
      ({ actor, params }) => keys.rotateKey(keyServices, actor.clinicId, params.id),
      { params: IdParams, response: { 200: ApiKeyWithSecretModel, ...errorResponses(401, 403, 404, 409, 422) }, detail: { summary: "New value; the old one fails at once" } },
    )
    .delete(
      "/keys/:id",
      async ({ actor, params, status }) => {
        await keys.revokeKey(keyServices, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) }, detail: { summary: "Revoke; the key then gets 401 API_KEY_REVOKED" } },
    )
    .get(
      "/usage",
      ({ actor, query }) => flushed(() => paginator.list(query, keys.USAGE_KEYSET, (page) => keys.listUsage(services, actor.clinicId, actor.clinic.timezone, query, page), keys.usageView)),
      { query: UsageQuery, response: { 200: CursorPage(UsageRowModel), ...errorResponses(400, 401, 403, 422) }, detail: { summary: "The usage log" } },
    )
    .get(
      "/usage/summary",
      ({ actor, query }) => flushed(() => keys.usageSummary(services, actor.clinicId, query.date)),
      { query: SummaryQuery, response: { 200: t.Composite([SummaryModel, t.Object({ generated_at: t.String() })]), ...errorResponses(401, 403, 422) }, detail: { summary: "Calls per key and tool on a UTC day" } },
    )
    .get(
      "/usage/daily",
      ({ actor, query }) => flushed(() => keys.usageDaily(services, actor.clinicId, query.days ?? 30, query.api_key_id)),
      { query: DailyQuery, response: { 200: DailyModel, ...errorResponses(401, 403, 422) }, detail: { summary: "Calls per UTC day by outcome and per tool, for charts" } },
    );
};
