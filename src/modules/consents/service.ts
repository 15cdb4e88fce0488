import { and, asc, eq } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { CONSENT_CHANNELS, CONSENT_PURPOSES, consentRecords, tutorConsents, type ConsentChannel, type ConsentPurpose, type ConsentSource } from "../../db/schema";
import { newId } from "../../lib/crypto";
import { rfc3339 } from "../../lib/time";
import { tutorRecords } from "../tutors/service";

export interface ConsentStatement {
  channel: ConsentChannel;
  purpose: ConsentPurpose;
  granted: boolean;
  source: ConsentSource;
  evidence?: string | null;
  recordedBy: string | null;
}

type RecordRow = typeof consentRecords.$inferSelect;

const recordView = (row: RecordRow) => ({
  id: row.id,
  tutor_id: row.tutor_id,
  channel: row.channel,
  purpose: row.purpose,
  granted: row.granted,
  source: row.source,
  evidence: row.evidence,
  recorded_at: rfc3339(row.recorded_at),
  recorded_by: row.recorded_by,
});

/**
 * Appends a statement to the tutor's history and makes it the standing answer for its channel and
 * purpose, in one transaction (the outbox reads the standing answer when it sends).
 */
export async function recordConsent(ctx: ServiceContext, clinicId: string, tutorId: string, statement: ConsentStatement) {
  const now = ctx.clock.now();
  const status = statement.granted ? ("granted" as const) : ("withdrawn" as const);
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(consentRecords)
      .values({ id: newId(), clinic_id: clinicId, tutor_id: tutorId, channel: statement.channel, purpose: statement.purpose, granted: statement.granted, source: statement.source, evidence: statement.evidence ?? null, recorded_at: now, recorded_by: statement.recordedBy, created_at: now, updated_at: now })
      .returning();
    await tx
      .insert(tutorConsents)
      .values({ id: newId(), clinic_id: clinicId, tutor_id: tutorId, channel: statement.channel, purpose: statement.purpose, status, source: statement.source, recorded_at: now, created_at: now, updated_at: now })
      .onConflictDoUpdate({ target: [tutorConsents.tutor_id, tutorConsents.channel, tutorConsents.purpose], set: { status, source: statement.source, recorded_at: now, updated_at: now } });
    return recordView(row!);
  });
}

/** A tutor of the clinic records a statement (404 for another clinic's tutor). */
export async function recordForTutor(ctx: ServiceContext, clinicId: string, tutorId: string, statement: ConsentStatement) {
  await tutorRecords.find(ctx, clinicId, tutorId);
  return recordConsent(ctx, clinicId, tutorId, statement);
}

export async function consentsOf(ctx: ServiceContext, clinicId: string, tutorId: string) {
  await tutorRecords.find(ctx, clinicId, tutorId);
  const history = await ctx.db.select().from(consentRecords).where(and(eq(consentRecords.clinic_id, clinicId), eq(consentRecords.tutor_id, tutorId))).orderBy(asc(consentRecords.recorded_at), asc(consentRecords.id));
  const standing = await ctx.db.select().from(tutorConsents).where(and(eq(tutorConsents.clinic_id, clinicId), eq(tutorConsents.tutor_id, tutorId)));
  const current = CONSENT_CHANNELS.flatMap((channel) =>
    CONSENT_PURPOSES.map((purpose) => {
      const found = standing.find((row) => row.channel === channel && row.purpose === purpose);
      return { channel, purpose, granted: found?.status === "granted", recorded_at: found ? rfc3339(found.recorded_at) : null, source: found?.source ?? null };
    }),
  );
  return { current, history: history.map(recordView) };
}
