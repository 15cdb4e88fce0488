import { and, eq, isNull, ne } from "drizzle-orm";
import { isUniqueViolation, type ServiceContext } from "../../db/client";
import { clinics, refreshTokens, users } from "../../db/schema";
import { newId, randomToken, sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { DAY } from "../../lib/clock";
import { isValidTimeZone } from "../../lib/time";
import { clinicView } from "../clinic/service";
import type { ClinicView } from "../clinic/model";
import { hashPassword, normalizeEmail, userView } from "../users/service";
import { useInvitation } from "./invitations";
import type { UserView } from "../users/model";
import type { LoginInput, RegisterInput } from "./model";

export const REFRESH_TOKEN_TTL_MS = 7 * DAY;

type UserRow = typeof users.$inferSelect;

export interface Session {
  user: UserView;
  clinic: ClinicView;
  /** The new refresh token value: goes into the cookie, only its hash is stored. */
  refreshToken: string;
}

/**
 * Verified against when the email is unknown, so both failures take the same time: a hash of
 * a discarded random password with the same parameters as `hashPassword`, so it never matches.
 */
const DECOY_HASH = "$argon2id$v=19$m=65536,t=2,p=1$5Z/uGgcNps1rAuF1MOEkpIh/dJYbBnnjTy4xiSLG0go$lyscGYRMmiltTfIUFg8LLHusMmjDryCVlAlx8kkpD0E";

async function issueRefreshToken(ctx: ServiceContext, user: UserRow, familyId: string): Promise<string> {
  const value = randomToken(32);
  const now = ctx.clock.now();
  await ctx.db.insert(refreshTokens).values({
    id: newId(),
    family_id: familyId,
    user_id: user.id,
    clinic_id: user.clinic_id,
    token_hash: sha256Hex(value),
    expires_at: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS),
    created_at: now,
  });
  return value;
}

async function sessionFor(ctx: ServiceContext, user: UserRow, familyId: string): Promise<Session> {
  const [clinic] = await ctx.db.select().from(clinics).where(eq(clinics.id, user.clinic_id));
  if (!clinic) throw new AppError("INVALID_CREDENTIALS", "Invalid email or password");
  return { user: userView(user), clinic: clinicView(clinic), refreshToken: await issueRefreshToken(ctx, user, familyId) };
}

/** How a registration is admitted besides the policy: only as the install's first account (the setup link), or with an invitation. */
export interface RegisterTerms {
  onlyIfEmpty?: boolean;
  /** An invitation token: it must be live, and is used up in the same transaction. */
  invitation?: string;
}

/** Creates a clinic (plan standard) and its owner, and starts a session. The install's first account is its first administrator. */
export async function register(ctx: ServiceContext, input: RegisterInput, terms: RegisterTerms = {}): Promise<Session> {
  const email = normalizeEmail(input.email);
  const timezone = input.timezone ?? "UTC";
  if (!isValidTimeZone(timezone)) {
    throw AppError.validation([{ path: "body.timezone", message: "Must be an IANA time zone, e.g. America/Santiago" }]);
  }
  const passwordHash = await hashPassword(input.password);
  const now = ctx.clock.now();
  try {
    return await ctx.db.transaction(async (tx) => {
      const [taken] = await tx.select({ id: users.id }).from(users).where(and(eq(users.email, email), isNull(users.deleted_at)));
      if (taken) throw new AppError("EMAIL_TAKEN", "An account with this email already exists");
      // The install's first account is its first administrator.
      const [anyone] = await tx.select({ id: users.id }).from(users).limit(1);
      if (anyone && terms.onlyIfEmpty) throw new AppError("FORBIDDEN", "This install already has its first account; sign in instead");
      const clinicId = newId();
      await tx.insert(clinics).values({
        id: clinicId,
        name: input.clinic_name.trim(),
        timezone,
        currency: input.currency ?? "CLP",
        created_at: now,
        updated_at: now,
      });
      const [user] = await tx
        .insert(users)
        .values({ id: newId(), clinic_id: clinicId, email, name: input.name.trim(), role: "owner", is_admin: !anyone, password_hash: passwordHash, created_at: now, updated_at: now })
        .returning();
      if (terms.invitation !== undefined) await useInvitation({ db: tx, clock: ctx.clock }, terms.invitation, user!.id);
      return sessionFor({ db: tx, clock: ctx.clock }, user!, newId());
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError("EMAIL_TAKEN", "An account with this email already exists");
    throw error;
  }
}

/** Whether any account exists (a deleted one counts: the install was set up). */
export async function hasAnyUser(ctx: ServiceContext): Promise<boolean> {
  const [anyone] = await ctx.db.select({ id: users.id }).from(users).limit(1);
  return anyone !== undefined;
}

export async function login(ctx: ServiceContext, input: LoginInput): Promise<Session> {
  const email = normalizeEmail(input.email);
  const [user] = await ctx.db.select().from(users).where(and(eq(users.email, email), isNull(users.deleted_at)));
  // An unknown email is verified against the decoy, which never matches.
  const matches = await Bun.password.verify(input.password, user?.password_hash ?? DECOY_HASH);
  if (!user || !matches) throw new AppError("INVALID_CREDENTIALS", "Invalid email or password");
  return sessionFor(ctx, user, newId());
}

/**
 * Rotates a refresh token. Each token is single-use: presenting one that was already used
 * revokes its whole family (every session descended from that login).
 */
export async function refresh(ctx: ServiceContext, token: string | undefined): Promise<Session> {
  if (!token) throw new AppError("AUTH_REQUIRED", "The refresh cookie is missing");
  const now = ctx.clock.now();
  const outcome = await ctx.db.transaction(async (tx) => {
    const [row] = await tx.select().from(refreshTokens).where(eq(refreshTokens.token_hash, sha256Hex(token)));
    if (!row) return { error: new AppError("INVALID_TOKEN", "The refresh token is not valid") };
    if (row.revoked_at) return { error: new AppError("INVALID_TOKEN", "The session was ended; log in again") };
    if (row.expires_at <= now) return { error: new AppError("TOKEN_EXPIRED", "The refresh token has expired; log in again") };
    // Claiming the token is one conditional update, so two concurrent refreshes cannot both win.
    const claimed = await tx
      .update(refreshTokens)
      .set({ used_at: now })
      .where(and(eq(refreshTokens.id, row.id), isNull(refreshTokens.used_at)))
      .returning({ id: refreshTokens.id });
    if (claimed.length === 0) {
      await tx.update(refreshTokens).set({ revoked_at: now }).where(and(eq(refreshTokens.family_id, row.family_id), isNull(refreshTokens.revoked_at)));
      return { error: new AppError("REFRESH_TOKEN_REUSED", "This refresh token was already used; the session has been revoked") };
    }
    const [user] = await tx.select().from(users).where(and(eq(users.id, row.user_id), isNull(users.deleted_at)));
    if (!user) return { error: new AppError("INVALID_TOKEN", "The account no longer exists") };
    return { session: await sessionFor({ db: tx, clock: ctx.clock }, user, row.family_id) };
  });
  // The family revocation must commit, so the error is thrown after the transaction.
  if ("error" in outcome) throw outcome.error;
  return outcome.session;
}

/** Ends the session family of this refresh token, if it belongs to the caller. */
export async function logout(ctx: ServiceContext, userId: string, token: string | undefined): Promise<void> {
  if (!token) return;
  const [row] = await ctx.db.select().from(refreshTokens).where(eq(refreshTokens.token_hash, sha256Hex(token)));
  if (!row || row.user_id !== userId) return;
  await revokeFamilies(ctx, eq(refreshTokens.family_id, row.family_id));
}

/**
 * A user changes their own password: the current one must match; every other session of the
 * user ends (their refresh tokens are revoked), the one presenting `keepToken` stays.
 */
export async function changePassword(ctx: ServiceContext, userId: string, input: { current_password: string; new_password: string }, keepToken: string | undefined): Promise<void> {
  const [user] = await ctx.db.select().from(users).where(and(eq(users.id, userId), isNull(users.deleted_at)));
  if (!user) throw AppError.notFound("User", userId);
  if (!(await Bun.password.verify(input.current_password, user.password_hash))) {
    throw AppError.validation([{ path: "body.current_password", message: "Does not match your current password" }], "The current password is wrong");
  }
  const [kept] = keepToken ? await ctx.db.select({ family: refreshTokens.family_id, user: refreshTokens.user_id }).from(refreshTokens).where(eq(refreshTokens.token_hash, sha256Hex(keepToken))) : [];
  const keepFamily = kept?.user === userId ? kept.family : undefined;
  const hash = await hashPassword(input.new_password);
  await ctx.db.transaction(async (tx) => {
    await tx.update(users).set({ password_hash: hash, updated_at: ctx.clock.now() }).where(eq(users.id, userId));
    const others = keepFamily ? and(eq(refreshTokens.user_id, userId), ne(refreshTokens.family_id, keepFamily)) : eq(refreshTokens.user_id, userId);
    await revokeFamilies({ db: tx, clock: ctx.clock }, others!);
  });
}



async function revokeFamilies(ctx: ServiceContext, which: ReturnType<typeof and> | ReturnType<typeof eq>): Promise<void> {
  await ctx.db.update(refreshTokens).set({ revoked_at: ctx.clock.now() }).where(and(which, isNull(refreshTokens.revoked_at)));
}

export async function me(ctx: ServiceContext, userId: string): Promise<{ user: UserView; clinic: ClinicView }> {
  const [row] = await ctx.db
    .select({ user: users, clinic: clinics })
    .from(users)
    .innerJoin(clinics, eq(clinics.id, users.clinic_id))
    .where(and(eq(users.id, userId), isNull(users.deleted_at)));
  if (!row) throw AppError.notFound("User", userId);
  return { user: userView(row.user), clinic: clinicView(row.clinic) };
}
