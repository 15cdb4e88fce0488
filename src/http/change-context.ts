import { Elysia } from "elysia";
import type { ChangeContexts } from "../db/change-context";
import type { Clock } from "../lib/clock";
import type { RequestStates } from "./request-context";

/**
 * Every request runs in a change context of its own (its id and the app's clock; the auth guard
 * adds who is calling), which the database layer turns into the audit trigger's settings in
 * each transaction. The hook is synchronous so the context reaches the handler's awaits.
 */
export const changeContext = (contexts: ChangeContexts, clock: Clock, requests: RequestStates) =>
  new Elysia({ name: "change-context" }).onRequest(({ request }) => {
    contexts.begin({ requestId: requests.of(request).id, now: () => clock.now() });
  });
