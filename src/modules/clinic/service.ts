import { and, eq, isNull } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { clinics, invoices, payments } from "../../db/schema";
import { AppError, type FieldError } from "../../lib/errors";
import { normalizeRut } from "../../lib/rut";
import { isValidTimeZone, serialize } from "../../lib/time";
import type { ClinicView, UpdateClinicInput } from "./model";

export const clinicView = (row: typeof clinics.$inferSelect): ClinicView => serialize(row);


export async function getClinic(ctx: ServiceContext, clinicId: string) {
  const [row] = await ctx.db.select().from(clinics).where(eq(clinics.id, clinicId));
  if (!row) throw AppError.notFound("Clinic");
  return clinicView(row);
}

/**
 * The owner's settings. The RUT is verified (módulo 11) and normalized; the time zone must be an
 * IANA zone; the currency may change only while the clinic has no invoices or payments (their
 * amounts are in the old currency).
 */
export async function updateClinic(ctx: ServiceContext, clinicId: string, input: UpdateClinicInput) {
  const fields: FieldError[] = [];
  const changes: Partial<typeof clinics.$inferInsert> = { ...input };
  if (input.rut != null) {
    const rut = normalizeRut(input.rut);
    if (!rut) fields.push({ path: "body.rut", message: "Not a valid RUT (check digit)" });
    else changes.rut = rut;
  }
  if (input.timezone !== undefined && !isValidTimeZone(input.timezone)) fields.push({ path: "body.timezone", message: "Must be an IANA time zone, e.g. America/Santiago" });
  if (fields.length) throw AppError.validation(fields);
  return ctx.db.transaction(async (tx) => {
    const [current] = await tx.select().from(clinics).where(eq(clinics.id, clinicId)).for("update");
    if (!current) throw AppError.notFound("Clinic");
    if (input.currency !== undefined && input.currency !== current.currency) {
      const [invoice] = await tx.select({ id: invoices.id }).from(invoices).where(and(eq(invoices.clinic_id, clinicId), isNull(invoices.deleted_at))).limit(1);
      const [payment] = await tx.select({ id: payments.id }).from(payments).where(eq(payments.clinic_id, clinicId)).limit(1);
      if (invoice || payment) throw new AppError("CONFLICT", "The currency cannot change once the clinic has invoices or payments", { reason: "money_records_exist" });
    }
    const [row] = await tx.update(clinics).set({ ...changes, updated_at: ctx.clock.now() }).where(eq(clinics.id, clinicId)).returning();
    return clinicView(row!);
  });
}
