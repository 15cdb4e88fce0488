import { and, eq, isNull } from "drizzle-orm";
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { Db } from "../db/client";
import type { ChangeContexts } from "../db/change-context";
import { clinics, users, type Role } from "../db/schema";
import type { Clock } from "../lib/clock";
import { AppError } from "../lib/errors";
import { accessTokens } from "./access-token";
import type { RestRateLimits } from "./rate-limit";
import type { RequestStates } from "./request-context";
import { userRateLimit } from "./user-rate-limit";

/** Who is calling: loaded from the database on every call, so deleted users and role changes apply at once. */
export interface Actor {
  userId: string;
  clinicId: string;
  role: Role;
  /** An install administrator (install-wide actions), apart from the clinic role. */
  isAdmin: boolean;
  email: string;
  name: string;
  clinic: { id: string; timezone: string; currency: string; tax_rate_bps: number };
}

export interface AuthGuardDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, "jwtSecret">;
  rateLimits: RestRateLimits;
  requests: RequestStates;
  changeContexts: ChangeContexts;
}

function bearerToken(header: string | null): string {
  if (!header) throw new AppError("AUTH_REQUIRED", "Send Authorization: Bearer <access token>");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError("INVALID_TOKEN", "The Authorization header must be Bearer <token>");
  return match[1]!;
}

/** The caller of a verified token, with the clinic settings routes need; undefined when the user is gone. */
async function loadActor(db: Db, userId: string, clinicId: string): Promise<Actor | undefined> {
  const [row] = await db
    .select({ userId: users.id, email: users.email, name: users.name, role: users.role, isAdmin: users.is_admin, clinicId: clinics.id, timezone: clinics.timezone, currency: clinics.currency, tax_rate_bps: clinics.tax_rate_bps })
    .from(users)
    .innerJoin(clinics, eq(clinics.id, users.clinic_id))
    .where(and(eq(users.id, userId), eq(users.clinic_id, clinicId), isNull(users.deleted_at)))
    .limit(1);
  if (!row) return undefined;
  return { userId: row.userId, clinicId: row.clinicId, role: row.role, isAdmin: row.isAdmin, email: row.email, name: row.name, clinic: { id: row.clinicId, timezone: row.timezone, currency: row.currency, tax_rate_bps: row.tax_rate_bps } };
}

/**
 * The `auth` route option: `auth: true` requires a valid access token of a live user;
 * `auth: ["owner"]` also requires one of those roles; `auth: "admin"` requires an install
 * administrator (install-wide actions: no clinic role, the owner's included, is enough). It resolves the actor (loaded on every
 * call, so deleted users and role changes apply at once); the token plugin verifies, the
 * per-user limit counts the call.
 */
export const authGuard = ({ db, clock, config, rateLimits, requests, changeContexts }: AuthGuardDeps) => {
  const countCall = userRateLimit(rateLimits);
  return new Elysia({ name: "auth-guard" }).use(accessTokens({ config, clock })).macro({
    auth: (roles: true | "admin" | readonly Role[]) => ({
      async resolve({ request, verifyAccessToken, set }) {
        const { userId, clinicId } = await verifyAccessToken(bearerToken(request.headers.get("authorization")));
        const actor = await loadActor(db, userId, clinicId);
        if (!actor) throw new AppError("INVALID_TOKEN", "The access token's user no longer exists");
        requests.of(request).clinicId = actor.clinicId;
        // The changes this request makes are recorded as this user's.
        const changes = changeContexts.current();
        if (changes) changes.actor = { type: "user", id: actor.userId, name: actor.name };
        countCall(actor.userId, set.headers);
        if (roles === "admin") {
          if (!actor.isAdmin) throw new AppError("FORBIDDEN", "This action acts on the whole install: it needs an install administrator");
        } else if (roles !== true && !roles.includes(actor.role)) throw new AppError("FORBIDDEN", `This action needs the role ${roles.join(" or ")}`);
        return { actor };
      },
    }),
  });
};
