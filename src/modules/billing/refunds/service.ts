import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../../db/client";
import { clinicRecords, liveIn, recordView, withinDays } from "../../../db/clinic-records";
import { payments, refunds } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { lockInvoice } from "../invoices/service";
import { setPaidAmount } from "../payments/service";
import type { CreateRefundInput } from "./model";

export const refundRecords = clinicRecords(refunds, "Refund");

export const view = (row: typeof refunds.$inferSelect) => recordView(row);

/** A refund of part or all of what a payment has left; the payment and the invoice follow. */
export async function create(ctx: ServiceContext, clinicId: string, input: CreateRefundInput) {
  return ctx.db.transaction(async (tx) => {
    const [found] = await tx.select({ invoice_id: payments.invoice_id }).from(payments).where(and(liveIn(payments, clinicId), eq(payments.id, input.payment_id)));
    if (!found) throw AppError.validation([{ path: "body.payment_id", message: "No such payment in this clinic" }]);
    // Invoice first, then payment: the same lock order as payments, so no deadlock.
    const invoice = await lockInvoice(tx, clinicId, found.invoice_id);
    const [payment] = await tx.select().from(payments).where(eq(payments.id, input.payment_id)).for("update");
    if (!invoice || !payment) throw AppError.validation([{ path: "body.payment_id", message: "No such payment in this clinic" }]);
    const refundable = payment.amount - payment.refunded_amount;
    if (input.amount > refundable) {
      throw new AppError("AMOUNT_EXCEEDS_BALANCE", `The amount ${input.amount} exceeds what the payment has left to refund (${refundable})`, { refundable, amount: input.amount });
    }
    const now = ctx.clock.now();
    const [row] = await tx
      .insert(refunds)
      .values({ id: newId(), clinic_id: clinicId, payment_id: payment.id, invoice_id: invoice.id, amount: input.amount, currency: payment.currency, reason: input.reason ?? null, refunded_at: now, created_at: now, updated_at: now })
      .returning();
    await tx.update(payments).set({ refunded_amount: payment.refunded_amount + input.amount, updated_at: now }).where(eq(payments.id, payment.id));
    await setPaidAmount(tx, invoice, invoice.paid_amount - input.amount, now);
    return view(row!);
  });
}

export function list(ctx: ServiceContext, clinicId: string, timeZone: string, filters: { payment_id?: string; invoice_id?: string; date_from?: string; date_to?: string }, page: PageRequest) {
  return refundRecords.page(
    ctx,
    clinicId,
    [
      filters.payment_id ? eq(refunds.payment_id, filters.payment_id) : undefined,
      filters.invoice_id ? eq(refunds.invoice_id, filters.invoice_id) : undefined,
      ...withinDays(refunds.refunded_at, filters, timeZone),
    ],
    page,
  );
}
