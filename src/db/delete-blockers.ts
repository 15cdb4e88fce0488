import { and, count, eq, isNull, type SQL } from "drizzle-orm";
import type { AnyPgColumn, PgTable } from "drizzle-orm/pg-core";
import { AppError } from "../lib/errors";
import type { Db } from "./client";

/** A kind of live record that keeps another from being deleted: its table and which rows count. */
export interface Blocker {
  kind: string;
  table: PgTable & { clinic_id: AnyPgColumn; deleted_at: AnyPgColumn };
  where: SQL;
}

/**
 * Referential integrity for soft deletes: counts each kind of live record that still depends on
 * the one being deleted and refuses with 409 CONFLICT naming them (`details.blocked_by`), so no
 * tutor or patient disappears from under open work. History (completed visits, paid invoices)
 * does not block and stays readable, pointing at the deleted record's id.
 */
export async function assertNothingBlocks(db: Db, clinicId: string, what: string, blockers: Blocker[]): Promise<void> {
  const counts: Record<string, number> = {};
  for (const blocker of blockers) {
    const { table } = blocker;
    const [row] = await db.select({ n: count() }).from(table).where(and(eq(table.clinic_id, clinicId), isNull(table.deleted_at), blocker.where));
    const n = Number(row?.n ?? 0);
    if (n > 0) counts[blocker.kind] = n;
  }
  if (Object.keys(counts).length === 0) return;
  const list = Object.entries(counts).map(([kind, n]) => `${n} ${kind.replaceAll("_", " ")}`).join(" and ");
  throw new AppError("CONFLICT", `The ${what} still has ${list}; finish, cancel or delete them first`, { blocked_by: counts });
}

