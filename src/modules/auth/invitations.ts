import { and, desc, eq, gt, isNull } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { invitations } from "../../db/schema";
import { DAY } from "../../lib/clock";
import { newId, randomToken, sha256Hex } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { serialize } from "../../lib/time";

/** How long an invitation to open a clinic stays valid. */
export const INVITATION_TTL_MS = 7 * DAY;

type InvitationRow = typeof invitations.$inferSelect;

export const invitationView = ({ token_hash: _hash, ...visible }: InvitationRow) => serialize(visible);

/** A new single-use invitation; the token is returned once, only its digest is kept. */
export async function createInvitation(ctx: ServiceContext, createdBy: string, note: string | undefined) {
  const token = randomToken(32);
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(invitations)
    .values({ id: newId(), token_hash: sha256Hex(token), note: note?.trim() || null, created_by: createdBy, expires_at: new Date(now.getTime() + INVITATION_TTL_MS), created_at: now })
    .returning();
  return { invitation: invitationView(row!), token };
}

export async function listInvitations(ctx: ServiceContext) {
  const rows = await ctx.db.select().from(invitations).orderBy(desc(invitations.created_at)).limit(200);
  return rows.map(invitationView);
}

/** Ends an invitation not yet used (it expires at once). */
export async function revokeInvitation(ctx: ServiceContext, id: string): Promise<void> {
  const ended = await ctx.db.update(invitations).set({ expires_at: ctx.clock.now() }).where(and(eq(invitations.id, id), isNull(invitations.used_at))).returning({ id: invitations.id });
  if (ended.length === 0) throw AppError.notFound("Unused invitation", id);
}

/**
 * Uses up an invitation for the owner it made: one conditional update, so two registrations
 * racing with one token cannot both win.
 */
export async function useInvitation(ctx: ServiceContext, token: string, userId: string): Promise<void> {
  const now = ctx.clock.now();
  const used = await ctx.db
    .update(invitations)
    .set({ used_at: now, used_by: userId })
    .where(and(eq(invitations.token_hash, sha256Hex(token)), isNull(invitations.used_at), gt(invitations.expires_at, now)))
    .returning({ id: invitations.id });
  if (used.length === 0) throw new AppError("REGISTRATION_CLOSED", "This invitation is not valid: it was used, has expired or never existed");
}
