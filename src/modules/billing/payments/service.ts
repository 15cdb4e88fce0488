import { eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../../db/client";
import { clinicRecords, recordView, withinDays } from "../../../db/clinic-records";
import { payments } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { lockInvoice, settleInvoice } from "../invoices/ledger";
import type { CreatePaymentInput } from "./model";

export const paymentRecords = clinicRecords(payments, "Payment");

export const view = (row: typeof payments.$inferSelect) => recordView(row);

/**
 * A payment on an emitted invoice, never above its balance. The invoice row is locked for the
 * transaction, so concurrent payments are serialized and can never overpay it.
 */
export async function create(ctx: ServiceContext, clinicId: string, input: CreatePaymentInput) {
  return ctx.db.transaction(async (tx) => {
    const invoice = await lockInvoice(tx, clinicId, input.invoice_id);
    if (!invoice) throw AppError.validation([{ path: "body.invoice_id", message: "No such invoice in this clinic" }]);
    if (invoice.status !== "emitted" && invoice.status !== "paid") {
      const hint = invoice.status === "draft" ? "; emit it first" : "";
      throw new AppError("INVALID_STATE_TRANSITION", `A ${invoice.status} invoice cannot take payments${hint}`, { status: invoice.status });
    }
    const balance = invoice.total_amount - invoice.credited_amount - invoice.paid_amount;
    if (input.amount > balance) {
      throw new AppError("AMOUNT_EXCEEDS_BALANCE", `The amount ${input.amount} exceeds the invoice balance ${balance}`, { balance, amount: input.amount });
    }
    const now = ctx.clock.now();
    const [row] = await tx
      .insert(payments)
      .values({ id: newId(), clinic_id: clinicId, invoice_id: invoice.id, amount: input.amount, currency: invoice.currency, method: input.method, reference: input.reference ?? null, paid_at: now, created_at: now, updated_at: now })
      .returning();
    await settleInvoice(tx, invoice, { paid: invoice.paid_amount + input.amount }, now);
    return view(row!);
  });
}

export function list(ctx: ServiceContext, clinicId: string, timeZone: string, filters: { invoice_id?: string; method?: string; date_from?: string; date_to?: string }, page: PageRequest) {
  return paymentRecords.page(
    ctx,
    clinicId,
    [
      filters.invoice_id ? eq(payments.invoice_id, filters.invoice_id) : undefined,
      filters.method ? inArray(payments.method, filters.method.split(",")) : undefined,
      ...withinDays(payments.paid_at, filters, timeZone),
    ],
    page,
  );
}
