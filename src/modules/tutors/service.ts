import { and, eq, isNull, notInArray, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { ServiceContext } from "../../db/client";
import { clinicRecords, recordView } from "../../db/clinic-records";
import { invoices, patients, tutors } from "../../db/schema";
import { assertNothingBlocks } from "../../db/delete-blockers";
import type { ListActor } from "../../http/clinic-resource";
import type { PageRequest } from "../../db/keyset";

import type { CreateTutorInput, UpdateTutorInput } from "./model";

export const tutorRecords = clinicRecords(tutors, "Tutor");
export type TutorRow = typeof tutors.$inferSelect;

export const view = (row: TutorRow) => recordView(row);

/** `%` and `_` in a search are literal text, not patterns. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * `q` on names: accent- and case-insensitive ("gonzalez" finds "González"), both sides folded by
 * the database's fold_name, which the trigram index is built on.
 */
export const nameMatches = (column: AnyPgColumn, q: string) => sql`fold_name(${column}) like fold_name(${likePattern(q)})`;

export const create = async (ctx: ServiceContext, clinicId: string, input: CreateTutorInput) =>
  view(await tutorRecords.insert(ctx, clinicId, { ...input, name: input.name.trim() }));

export const update = async (ctx: ServiceContext, clinicId: string, id: string, input: UpdateTutorInput) =>
  view(await tutorRecords.update(ctx, clinicId, id, input.name ? { ...input, name: input.name.trim() } : input));

/** A tutor with live patients or invoices that are not paid or void cannot be deleted (409). */
export async function remove(ctx: ServiceContext, clinicId: string, id: string) {
  await tutorRecords.find(ctx, clinicId, id);
  await assertNothingBlocks(ctx.db, clinicId, "tutor", [
    { kind: "live_patients", table: patients, where: eq(patients.tutor_id, id) },
    { kind: "unpaid_invoices", table: invoices, where: and(eq(invoices.tutor_id, id), notInArray(invoices.status, ["paid", "void", "credited"]))! },
  ]);
  await tutorRecords.softDelete(ctx, clinicId, id);
}

/** Lists and search leave out blocked (erased) tutors. */
export const list = (ctx: ServiceContext, { clinicId }: ListActor, filters: { q?: string }, page: PageRequest) =>
  tutorRecords.page(ctx, clinicId, [isNull(tutors.blocked_at), filters.q ? nameMatches(tutors.name, filters.q) : undefined], page);
