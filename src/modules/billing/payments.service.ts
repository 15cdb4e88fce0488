import { and, eq, gte, inArray, lt } from "drizzle-orm";
import type { ServiceContext, Tx } from "../../db/client";
import { clinicRecords, liveIn, recordView } from "../../db/clinic-records";
import { invoices, payments, refunds } from "../../db/schema";
import type { PageRequest } from "../../db/keyset";
import { newId } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { dayRange } from "../../lib/time";
import { lockInvoice } from "./invoices.service";
import type { CreatePaymentInput, CreateRefundInput } from "./model";

export const paymentRecords = clinicRecords(payments, "Payment");
export const refundRecords = clinicRecords(refunds, "Refund");

export const paymentView = (row: typeof payments.$inferSelect) => recordView(row);

export const refundView = (row: typeof refunds.$inferSelect) => recordView(row);

/** The invoice follows what it has been paid: `paid` exactly when covered. */
async function setPaidAmount(tx: Tx, invoice: typeof invoices.$inferSelect, paidAmount: number, now: Date) {
  const covered = paidAmount === invoice.total_amount;
  await tx
    .update(invoices)
    .set({ paid_amount: paidAmount, status: covered ? "paid" : invoice.status === "paid" ? "emitted" : invoice.status, paid_at: covered ? (invoice.paid_at ?? now) : null, updated_at: now })
    .where(eq(invoices.id, invoice.id));
}

/**
 * A payment on an emitted invoice, never above its balance. The invoice row is locked for the
 * transaction, so concurrent payments are serialized and can never overpay it.
 */
export async function createPayment(ctx: ServiceContext, clinicId: string, input: CreatePaymentInput) {
  return ctx.db.transaction(async (tx) => {
    const invoice = await lockInvoice(tx, clinicId, input.invoice_id);
    if (!invoice) throw AppError.validation([{ path: "body.invoice_id", message: "No such invoice in this clinic" }]);
    if (invoice.status !== "emitted" && invoice.status !== "paid") {
      const hint = invoice.status === "draft" ? "; emit it first" : "";
      throw new AppError("INVALID_STATE_TRANSITION", `A ${invoice.status} invoice cannot take payments${hint}`, { status: invoice.status });
    }
    const balance = invoice.total_amount - invoice.paid_amount;
    if (input.amount > balance) {
      throw new AppError("AMOUNT_EXCEEDS_BALANCE", `The amount ${input.amount} exceeds the invoice balance ${balance}`, { balance, amount: input.amount });
    }
    const now = ctx.clock.now();
    const [row] = await tx
      .insert(payments)
      .values({ id: newId(), clinic_id: clinicId, invoice_id: invoice.id, amount: input.amount, currency: invoice.currency, method: input.method, reference: input.reference ?? null, paid_at: now, created_at: now, updated_at: now })
      .returning();
    await setPaidAmount(tx, invoice, invoice.paid_amount + input.amount, now);
    return paymentView(row!);
  });
}

export const getPayment = async (ctx: ServiceContext, clinicId: string, id: string) => paymentView(await paymentRecords.find(ctx, clinicId, id));

export function listPayments(ctx: ServiceContext, clinicId: string, timeZone: string, filters: { invoice_id?: string; method?: string; date_from?: string; date_to?: string }, page: PageRequest) {
  const range = dayRange(filters.date_from, filters.date_to, timeZone);
  return paymentRecords.page(
    ctx,
    clinicId,
    [
      filters.invoice_id ? eq(payments.invoice_id, filters.invoice_id) : undefined,
      filters.method ? inArray(payments.method, filters.method.split(",")) : undefined,
      range.from ? gte(payments.paid_at, range.from) : undefined,
      range.to ? lt(payments.paid_at, range.to) : undefined,
    ],
    page,
  );
}

/** A refund of part or all of what a payment has left; the payment and the invoice follow. */
export async function createRefund(ctx: ServiceContext, clinicId: string, input: CreateRefundInput) {
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
    return refundView(row!);
  });
}

export const getRefund = async (ctx: ServiceContext, clinicId: string, id: string) => refundView(await refundRecords.find(ctx, clinicId, id));

export function listRefunds(ctx: ServiceContext, clinicId: string, timeZone: string, filters: { payment_id?: string; invoice_id?: string; date_from?: string; date_to?: string }, page: PageRequest) {
  const range = dayRange(filters.date_from, filters.date_to, timeZone);
  return refundRecords.page(
    ctx,
    clinicId,
    [
      filters.payment_id ? eq(refunds.payment_id, filters.payment_id) : undefined,
      filters.invoice_id ? eq(refunds.invoice_id, filters.invoice_id) : undefined,
      range.from ? gte(refunds.refunded_at, range.from) : undefined,
      range.to ? lt(refunds.refunded_at, range.to) : undefined,
    ],
    page,
  );
}
