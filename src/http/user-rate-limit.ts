import type { RestRateLimits } from "./rate-limit";

/**
 * The per-user REST limit: every signed-in call counts, and the response carries the limit's
 * headers (past it, 429 with Retry-After). Applied once the caller is known, before any role
 * check, so refused calls count too.
 */
export const userRateLimit = (rateLimits: RestRateLimits) => (userId: string, headers: Record<string, unknown>) => {
  Object.assign(headers, rateLimits.admitUserCall(userId));
};
