import { jwt } from "@elysiajs/jwt";
import { and, eq, isNull } from "drizzle-orm";
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { Db } from "../db/client";
import { clinics, users, type Role } from "../db/schema";
import type { Clock } from "../lib/clock";
import { AppError } from "../lib/errors";
import type { RestRateLimits } from "./rate-limit";
import { requestState } from "./request-context";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

/** Who is calling: loaded from the database on every call, so deleted users and role changes apply at once. */
export interface Actor {
  userId: string;
  clinicId: string;
  role: Role;
  email: string;
  clinic: { id: string; timezone: string; currency: string; tax_rate_bps: number };
}

export interface AccessClaims {
  sub: string;
  clinic_id: string;
  role: Role;
}

export interface AuthGuardDeps {
  db: Db;
  clock: Clock;
  config: Pick<Config, "jwtSecret">;
  rateLimits: RestRateLimits;
}

function bearerToken(header: string | null): string {
  if (!header) throw new AppError("AUTH_REQUIRED", "Send Authorization: Bearer <access token>");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError("INVALID_TOKEN", "The Authorization header must be Bearer <token>");
  return match[1]!;
}

/**
 * Access tokens (HS256 only, 15 minutes) and the `auth` route option: `auth: true` requires a
 * valid token of a live user; `auth: ["owner"]` also requires one of those roles.
 */
export const authGuard = ({ db, clock, config, rateLimits }: AuthGuardDeps) =>
  new Elysia({ name: "auth-guard" })
    .use(jwt({ name: "accessJwt", secret: config.jwtSecret, alg: "HS256" }))
    .derive({ as: "global" }, ({ accessJwt }) => ({
      /** Signs an access token for a user; `exp` follows the injected clock. */
      signAccessToken: (claims: AccessClaims) =>
        accessJwt.sign({ ...claims, exp: Math.floor(clock.now().getTime() / 1000) + ACCESS_TOKEN_TTL_SECONDS }),
    }))
    .macro({
      auth: (roles: true | readonly Role[]) => ({
        async resolve({ request, accessJwt, set }) {
          const token = bearerToken(request.headers.get("authorization"));
          const verified = await accessJwt.verify(token, { algorithms: ["HS256"], currentDate: clock.now() });
          if (!verified) {
            // A genuine token whose only fault is its age is reported as expired.
            const genuine = await accessJwt.verify(token, { algorithms: ["HS256"], currentDate: new Date(0) });
            throw genuine
              ? new AppError("TOKEN_EXPIRED", "The access token has expired; refresh it")
              : new AppError("INVALID_TOKEN", "The access token is not valid");
          }
          const { sub, clinic_id: clinicId } = verified as Partial<AccessClaims>;
          if (typeof sub !== "string" || typeof clinicId !== "string") {
            throw new AppError("INVALID_TOKEN", "The access token is not valid");
          }
          const [row] = await db
            .select({
              userId: users.id,
              email: users.email,
              role: users.role,
              clinicId: clinics.id,
              timezone: clinics.timezone,
              currency: clinics.currency,
              tax_rate_bps: clinics.tax_rate_bps,
            })
            .from(users)
            .innerJoin(clinics, eq(clinics.id, users.clinic_id))
            .where(and(eq(users.id, sub), eq(users.clinic_id, clinicId), isNull(users.deleted_at)))
            .limit(1);
          if (!row) throw new AppError("INVALID_TOKEN", "The access token's user no longer exists");
          requestState(request).clinicId = row.clinicId;
          Object.assign(set.headers, rateLimits.admitUserCall(row.userId));
          if (roles !== true && !roles.includes(row.role)) {
            throw new AppError("FORBIDDEN", `This action needs the role ${roles.join(" or ")}`);
          }
          const actor: Actor = {
            userId: row.userId,
            clinicId: row.clinicId,
            role: row.role,
            email: row.email,
            clinic: { id: row.clinicId, timezone: row.timezone, currency: row.currency, tax_rate_bps: row.tax_rate_bps },
          };
          return { actor };
        },
      }),
    });
