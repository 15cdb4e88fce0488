import { and, eq } from "drizzle-orm";
import type { Tx } from "../../../db/client";
import { liveIn } from "../../../db/clinic-records";
import { invoices, type InvoiceStatus } from "../../../db/schema";

export type InvoiceRow = typeof invoices.$inferSelect;

/** Locks the invoice row for the rest of the transaction (payments, refunds, documents). */
export async function lockInvoice(tx: Tx, clinicId: string, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await tx.select().from(invoices).where(and(liveIn(invoices, clinicId), eq(invoices.id, id))).for("update");
  return row;
}

/**
 * The invoice follows its money: `credited` once notas de crédito took off the whole sale, `paid`
 * exactly when payments cover what the credit notes left, and back to `emitted` when a refund
 * uncovers it. `total − credited − paid` is the balance.
 */
export async function settleInvoice(tx: Tx, invoice: InvoiceRow, money: { paid?: number; credited?: number }, now: Date): Promise<InvoiceRow> {
  const paid = money.paid ?? invoice.paid_amount;
  const credited = money.credited ?? invoice.credited_amount;
  const due = invoice.total_amount - credited;
  let status: InvoiceStatus = invoice.status;
  if (credited > 0 && due === 0) status = "credited";
  else if (paid === due) status = "paid";
  else if (invoice.status === "paid") status = "emitted";
  const [row] = await tx
    .update(invoices)
    .set({ paid_amount: paid, credited_amount: credited, status, paid_at: status === "paid" ? (invoice.paid_at ?? now) : null, updated_at: now })
    .where(eq(invoices.id, invoice.id))
    .returning();
  return row!;
}
