import { Elysia } from "elysia";
import type { Logger } from "../lib/logger";

export interface RequestState {
  id: string;
  startedAt: number;
  clinicId?: string;
}

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Per-request facts shared by the plugins (request id, timing, clinic for the log line); one per app. */
export class RequestStates {
  private readonly states = new WeakMap<Request, RequestState>();

  of(request: Request): RequestState {
    let state = this.states.get(request);
    if (!state) {
      state = { id: Bun.randomUUIDv7(), startedAt: performance.now() };
      this.states.set(request, state);
    }
    return state;
  }

  set(request: Request, state: RequestState): void {
    this.states.set(request, state);
  }
}

/** A path that carries a secret (the calendar feed's token) is logged without it. */
const SECRET_PATH = /^(\/api\/v1\/calendar\/)[^/]*$/;
export const loggablePath = (path: string) => path.replace(SECRET_PATH, "$1{token}.ics");

/**
 * X-Request-ID echo or generation, and one JSON log line per request with method, path,
 * status, duration, request id and clinic. Query strings are left out of the log.
 */
export const requestContext = (logger: Logger, states: RequestStates) => {
  const plugin = new Elysia({ name: "request-context" }).onRequest(({ request, set }) => {
    const given = request.headers.get("x-request-id");
    const state: RequestState = {
      id: given && CLIENT_ID.test(given) ? given : Bun.randomUUIDv7(),
      startedAt: performance.now(),
    };
    states.set(request, state);
    set.headers["x-request-id"] = state.id;
  });
  // The request line is an info line. With it off (LOG_LEVEL=warn and above) no hook runs after
  // each response: Elysia schedules one per request, a few µs that would write nothing.
  if (!logger.writes("info")) return plugin;
  return plugin.onAfterResponse({ as: "global" }, ({ request, set, path }) => {
    const state = states.of(request);
    logger.info("request", {
      method: request.method,
      path: loggablePath(path),
      status: typeof set.status === "number" ? set.status : 200,
      ms: Math.round((performance.now() - state.startedAt) * 100) / 100,
      request_id: state.id,
      clinic_id: state.clinicId ?? null,
    });
  });
};
