import { jwt } from "@elysiajs/jwt";
import { Elysia } from "elysia";
import type { Config } from "../config";
import type { Role } from "../db/schema";
import type { Clock } from "../lib/clock";
import { AppError } from "../lib/errors";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface AccessClaims {
  sub: string;
  clinic_id: string;
  role: Role;
}

/**
 * Access tokens: HS256 only, 15 minutes, `exp` and verification following the injected clock.
 * Adds `signAccessToken` and `verifyAccessToken` to every route's context.
 */
export const accessTokens = ({ config, clock }: { config: Pick<Config, "jwtSecret">; clock: Clock }) =>
  new Elysia({ name: "access-tokens" }).use(jwt({ name: "accessJwt", secret: config.jwtSecret, alg: "HS256" })).derive({ as: "global" }, ({ accessJwt }) => ({
    signAccessToken: (claims: AccessClaims) => accessJwt.sign({ ...claims, exp: Math.floor(clock.now().getTime() / 1000) + ACCESS_TOKEN_TTL_SECONDS }),
    /** The token's user and clinic, or 401: TOKEN_EXPIRED for a genuine token whose only fault is its age, else INVALID_TOKEN. */
    async verifyAccessToken(token: string): Promise<{ userId: string; clinicId: string }> {
      const verified = await accessJwt.verify(token, { algorithms: ["HS256"], currentDate: clock.now() });
      if (!verified) {
        const genuine = await accessJwt.verify(token, { algorithms: ["HS256"], currentDate: new Date(0) });
        throw genuine ? new AppError("TOKEN_EXPIRED", "The access token has expired; refresh it") : new AppError("INVALID_TOKEN", "The access token is not valid");
      }
      const { sub, clinic_id: clinicId } = verified as Partial<AccessClaims>;
      if (typeof sub !== "string" || typeof clinicId !== "string") throw new AppError("INVALID_TOKEN", "The access token is not valid");
      return { userId: sub, clinicId };
    },
  }));
