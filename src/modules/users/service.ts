import { and, eq, isNull } from "drizzle-orm";
import { isUniqueViolation, type ServiceContext } from "../../db/client";
import { clinicRecords, liveIn } from "../../db/clinic-records";
import { refreshTokens, users } from "../../db/schema";
import type { PageRequest } from "../../db/keyset";
import { newId } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { serialize } from "../../lib/time";
import type { CreateUserInput, UpdateUserInput, UserView } from "./model";

type UserRow = typeof users.$inferSelect;

export const userRecords = clinicRecords(users, "User");

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** A user as the API shows it: never the password hash. */
export function userView(row: UserRow): UserView {
  const { password_hash: _secret, deleted_at: _deleted, ...visible } = row;
  return serialize(visible);
}

export const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

/** Ends every session of a user (every refresh-token family). */
export async function revokeAllSessions(ctx: ServiceContext, userId: string): Promise<void> {
  await ctx.db.update(refreshTokens).set({ revoked_at: ctx.clock.now() }).where(and(eq(refreshTokens.user_id, userId), isNull(refreshTokens.revoked_at)));
}

/** The CLI's reset for a forgotten password: by email, ending every session of that user. */
export async function resetPassword(ctx: ServiceContext, email: string, newPassword: string): Promise<{ user_id: string; email: string }> {
  const [user] = await ctx.db.select().from(users).where(and(eq(users.email, normalizeEmail(email)), isNull(users.deleted_at)));
  if (!user) throw new Error(`no user with the email ${normalizeEmail(email)}`);
  const hash = await hashPassword(newPassword);
  await ctx.db.transaction(async (tx) => {
    await tx.update(users).set({ password_hash: hash, updated_at: ctx.clock.now() }).where(eq(users.id, user.id));
    await revokeAllSessions({ db: tx, clock: ctx.clock }, user.id);
  });
  return { user_id: user.id, email: user.email };
}

/**
 * The CLI's `admin grant|revoke EMAIL`: makes a user an install administrator or not. The last
 * administrator is not revoked (the install would have nobody to act on it).
 */
export async function setInstallAdmin(ctx: ServiceContext, email: string, isAdmin: boolean): Promise<{ user_id: string; email: string; is_admin: boolean }> {
  return ctx.db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(and(eq(users.email, normalizeEmail(email)), isNull(users.deleted_at)));
    if (!user) throw new Error(`no user with the email ${normalizeEmail(email)}`);
    if (!isAdmin && user.is_admin) {
      const admins = await tx.select({ id: users.id }).from(users).where(and(eq(users.is_admin, true), isNull(users.deleted_at)));
      if (admins.length <= 1) throw new Error(`${user.email} is the install's only administrator; grant another user first`);
    }
    await tx.update(users).set({ is_admin: isAdmin, updated_at: ctx.clock.now() }).where(eq(users.id, user.id));
    return { user_id: user.id, email: user.email, is_admin: isAdmin };
  });
}

export async function createUser(ctx: ServiceContext, clinicId: string, input: CreateUserInput) {
  const now = ctx.clock.now();
  const passwordHash = await hashPassword(input.password);
  try {
    const [row] = await ctx.db
      .insert(users)
      .values({ id: newId(), clinic_id: clinicId, email: normalizeEmail(input.email), name: input.name.trim(), role: input.role, password_hash: passwordHash, created_at: now, updated_at: now })
      .returning();
    return userView(row!);
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError("EMAIL_TAKEN", "An account with this email already exists");
    throw error;
  }
}

export const listUsers = (ctx: ServiceContext, clinicId: string, page: PageRequest) => userRecords.page(ctx, clinicId, [], page);

/** Delta sync: users changed after `since`, removed ones included. */
export const userChanges = (ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) => userRecords.changedSince(ctx, clinicId, since, page);

export async function getUser(ctx: ServiceContext, clinicId: string, id: string) {
  return userView(await userRecords.find(ctx, clinicId, id));
}

/** Owners are not re-roled here: it keeps a clinic from losing its last owner. */
export async function updateUser(ctx: ServiceContext, clinicId: string, id: string, input: UpdateUserInput) {
  const current = await userRecords.find(ctx, clinicId, id);
  if (input.role && current.role === "owner") throw new AppError("CONFLICT", "The owner's role cannot be changed");
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  // Fields left undefined are not set (Drizzle leaves them out of the UPDATE).
  const row = await userRecords.update(ctx, clinicId, id, { name: input.name?.trim(), role: input.role, password_hash: passwordHash });
  if (input.password !== undefined) await revokeAllSessions(ctx, id);
  return userView(row);
}

/** Soft delete; the user's sessions end and their access tokens stop working at once. */
export async function deleteUser(ctx: ServiceContext, clinicId: string, actorId: string, id: string) {
  if (id === actorId) throw new AppError("CONFLICT", "You cannot delete your own account");
  const target = await userRecords.find(ctx, clinicId, id);
  if (target.role === "owner") throw new AppError("CONFLICT", "The owner cannot be deleted");
  await ctx.db.transaction(async (tx) => {
    const now = ctx.clock.now();
    await tx.update(users).set({ deleted_at: now, updated_at: now }).where(and(liveIn(users, clinicId), eq(users.id, id)));
    await revokeAllSessions({ db: tx, clock: ctx.clock }, id);
  });
}
