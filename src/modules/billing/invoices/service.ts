import { and, asc, count, eq, inArray } from "drizzle-orm";
import type { ServiceContext, Tx } from "../../../db/client";
import { assertReferenced, clinicRecords, liveIn, recordView, withinDays } from "../../../db/clinic-records";
import { invoiceItems, invoices, payments, type InvoiceStatus } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { invoiceTotals, lineTotal } from "../../../lib/money";
import { tutorRecords } from "../../tutors/service";
import { visitRecords } from "../../visits/service";
import type { CreateInvoiceInput, UpdateInvoiceInput } from "./model";

export const invoiceRecords = clinicRecords(invoices, "Invoice");

type InvoiceRow = typeof invoices.$inferSelect;
type ItemRow = typeof invoiceItems.$inferSelect;

/** What the clinic bills in: its currency and tax rate. */
export interface BillingClinic {
  id: string;
  currency: string;
  tax_rate_bps: number;
}

export function invoiceView(row: InvoiceRow, items?: ItemRow[]) {
  return {
    ...recordView(row),
    balance: row.total_amount - row.paid_amount,
    ...(items ? { items: items.map(({ id, description, quantity, unit_price, total_amount }) => ({ id, description, quantity, unit_price, total_amount })) } : {}),
  };
}

/** The invoice as the API shows it, with its items in order. */
async function withItems(db: ServiceContext["db"], row: InvoiceRow) {
  return invoiceView(row, await db.select().from(invoiceItems).where(eq(invoiceItems.invoice_id, row.id)).orderBy(asc(invoiceItems.position)));
}

/** References must be live records of the same clinic: a 422 otherwise, never a leak. */
const assertReferences = (ctx: ServiceContext, clinicId: string, input: { tutor_id?: string; visit_id?: string | null }) =>
  assertReferenced(ctx, clinicId, [
    { field: "tutor_id", id: input.tutor_id, records: tutorRecords, what: "tutor" },
    { field: "visit_id", id: input.visit_id, records: visitRecords, what: "visit" },
  ]);

async function writeItems(tx: Tx, clinicId: string, invoiceId: string, items: CreateInvoiceInput["items"], now: Date) {
  await tx.insert(invoiceItems).values(
    items.map((item, position) => ({
      id: newId(),
      clinic_id: clinicId,
      invoice_id: invoiceId,
      position,
      description: item.description.trim(),
      quantity: item.quantity,
      unit_price: item.unit_price,
      total_amount: lineTotal(item.quantity, item.unit_price),
      created_at: now,
      updated_at: now,
    })),
  );
}

export async function createInvoice(ctx: ServiceContext, clinic: BillingClinic, input: CreateInvoiceInput) {
  await assertReferences(ctx, clinic.id, input);
  const now = ctx.clock.now();
  const id = newId();
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(invoices)
      .values({ id, clinic_id: clinic.id, tutor_id: input.tutor_id, visit_id: input.visit_id ?? null, notes: input.notes ?? null, status: "draft", currency: clinic.currency, ...invoiceTotals(input.items, clinic.tax_rate_bps), created_at: now, updated_at: now })
      .returning();
    await writeItems(tx, clinic.id, id, input.items, now);
    return withItems(tx, row!);
  });
}

export async function getInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  return withItems(ctx.db, await invoiceRecords.find(ctx, clinicId, id));
}

/** Locks the invoice row for the rest of the transaction (payments, refunds, documents). */
export async function lockInvoice(tx: Tx, clinicId: string, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await tx.select().from(invoices).where(and(liveIn(invoices, clinicId), eq(invoices.id, id))).for("update");
  return row;
}

/** The invoice under its row lock, when its status allows `action`: 404 when missing, 409 otherwise. */
async function lockFor(tx: Tx, clinicId: string, id: string, allowed: InvoiceStatus[], action: string): Promise<InvoiceRow> {
  const row = await lockInvoice(tx, clinicId, id);
  if (!row) throw AppError.notFound("Invoice", id);
  if (!allowed.includes(row.status)) throw new AppError("INVALID_STATE_TRANSITION", `A ${row.status} invoice cannot ${action}`, { status: row.status });
  return row;
}

/** Only drafts are editable; new items replace the old ones and the totals are recomputed. */
export async function updateInvoice(ctx: ServiceContext, clinic: BillingClinic, id: string, input: UpdateInvoiceInput) {
  await assertReferences(ctx, clinic.id, input);
  return ctx.db.transaction(async (tx) => {
    await lockFor(tx, clinic.id, id, ["draft"], "be edited");
    const now = ctx.clock.now();
    // Fields left undefined are not set (Drizzle leaves them out of the UPDATE).
    const changes: Partial<typeof invoices.$inferInsert> = { tutor_id: input.tutor_id, visit_id: input.visit_id, notes: input.notes, updated_at: now };
    if (input.items) {
      Object.assign(changes, invoiceTotals(input.items, clinic.tax_rate_bps));
      await tx.delete(invoiceItems).where(eq(invoiceItems.invoice_id, id));
      await writeItems(tx, clinic.id, id, input.items, now);
    }
    const [row] = await tx.update(invoices).set(changes).where(eq(invoices.id, id)).returning();
    return withItems(tx, row!);
  });
}

export async function emitInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  return ctx.db.transaction(async (tx) => {
    await lockFor(tx, clinicId, id, ["draft"], "be emitted");
    const now = ctx.clock.now();
    const [row] = await tx.update(invoices).set({ status: "emitted", emitted_at: now, updated_at: now }).where(eq(invoices.id, id)).returning();
    return withItems(tx, row!);
  });
}

/** Drafts, and emitted invoices that never received a payment, can be voided. */
export async function voidInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  return ctx.db.transaction(async (tx) => {
    await lockFor(tx, clinicId, id, ["draft", "emitted"], "be voided");
    const [paid] = await tx.select({ n: count() }).from(payments).where(eq(payments.invoice_id, id));
    if (Number(paid?.n ?? 0) > 0) throw new AppError("INVALID_STATE_TRANSITION", "An invoice with payments cannot be voided; refund them instead");
    const now = ctx.clock.now();
    const [row] = await tx.update(invoices).set({ status: "void", voided_at: now, updated_at: now }).where(eq(invoices.id, id)).returning();
    return withItems(tx, row!);
  });
}

export interface InvoiceFilters {
  status?: string;
  tutor_id?: string;
  date_from?: string;
  date_to?: string;
}

/** Dates filter on `emitted_at`, as inclusive days in the clinic's time zone. */
export function listInvoices(ctx: ServiceContext, clinicId: string, timeZone: string, filters: InvoiceFilters, page: PageRequest) {
  return invoiceRecords.page(
    ctx,
    clinicId,
    [
      filters.status ? inArray(invoices.status, filters.status.split(",") as InvoiceStatus[]) : undefined,
      filters.tutor_id ? eq(invoices.tutor_id, filters.tutor_id) : undefined,
      ...withinDays(invoices.emitted_at, filters, timeZone),
    ],
    page,
  );
}
