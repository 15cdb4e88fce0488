import { and, eq } from "drizzle-orm";
import type { ServiceContext } from "../../../db/client";
import { clinicRecords, liveIn, recordView, withinDays } from "../../../db/clinic-records";
import { payments, refunds } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { lockInvoice, settleInvoice } from "../invoices/ledger";
import { issueCreditNote, saleDocumentOf } from "../sii/service";
import type { SiiSettings } from "../sii/settings";
import { requireDteText } from "../sii/xml";
import type { CreateRefundInput } from "./model";

export const refundRecords = clinicRecords(refunds, "Refund");

export const view = (row: typeof refunds.$inferSelect) => recordView(row);

/**
 * A refund of part or all of what a payment has left; the payment and the invoice follow. When the
 * sale has a factura or boleta, the money back is also taken off it at the SII in the same
 * transaction: a nota de crédito (61) of the refunded amount, CodRef 1 when it is the whole
 * document, else 3 (corrige montos). If that cannot be issued, the refund is refused with its reason.
 */
export async function create(ctx: ServiceContext, settings: SiiSettings, clinicId: string, input: CreateRefundInput) {
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
    await tx.update(payments).set({ refunded_amount: payment.refunded_amount + input.amount, updated_at: now }).where(eq(payments.id, payment.id));
    await settleInvoice(tx, invoice, { paid: invoice.paid_amount - input.amount }, now);
    const document = await saleDocumentOf(tx, clinicId, invoice.id);
    let creditNoteId: string | null = null;
    if (document) {
      const reason = input.reason?.trim().slice(0, 90).trimEnd() || undefined;
      requireDteText({ "body.reason": reason });
      creditNoteId = (await issueCreditNote(ctx, tx, settings, clinicId, { referencedId: document.id, amount: input.amount, reason })).id;
    }
    const [row] = await tx
      .insert(refunds)
      .values({ id: newId(), clinic_id: clinicId, payment_id: payment.id, invoice_id: invoice.id, amount: input.amount, currency: payment.currency, reason: input.reason ?? null, refunded_at: now, credit_note_id: creditNoteId, created_at: now, updated_at: now })
      .returning();
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

/** The service the ledger-resource routes call, with the settings notas de crédito need. */
export const refundService = (settings: SiiSettings) => ({
  create: (ctx: ServiceContext, clinicId: string, input: CreateRefundInput) => create(ctx, settings, clinicId, input),
  list,
  view,
});
