import { and, asc, count, eq, inArray } from "drizzle-orm";
import type { ServiceContext, Tx } from "../../../db/client";
import { clinicRecords, liveIn, recordView, withinDays } from "../../../db/clinic-records";
import { invoiceItems, invoices, payments, type InvoiceStatus } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError, type FieldError } from "../../../lib/errors";
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

async function itemsOf(ctx: ServiceContext, invoiceId: string) {
  return ctx.db.select().from(invoiceItems).where(eq(invoiceItems.invoice_id, invoiceId)).orderBy(asc(invoiceItems.position));
}

/** References must be live records of the same clinic: a 422 otherwise, never a leak. */
async function assertReferences(ctx: ServiceContext, clinicId: string, input: { tutor_id?: string; visit_id?: string | null }) {
  const fields: FieldError[] = [];
  if (input.tutor_id && !(await tutorRecords.exists(ctx, clinicId, input.tutor_id))) fields.push({ path: "body.tutor_id", message: "No such tutor in this clinic" });
  if (input.visit_id && !(await visitRecords.exists(ctx, clinicId, input.visit_id))) fields.push({ path: "body.visit_id", message: "No such visit in this clinic" });
  if (fields.length) throw AppError.validation(fields);
}

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
    return invoiceView(row!, await itemsOf({ db: tx, clock: ctx.clock }, id));
  });
}

export async function getInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  const row = await invoiceRecords.find(ctx, clinicId, id);
  return invoiceView(row, await itemsOf(ctx, id));
}

/** Locks the invoice row for the rest of the transaction (payments, refunds, documents). */
export async function lockInvoice(tx: Tx, clinicId: string, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await tx.select().from(invoices).where(and(liveIn(invoices, clinicId), eq(invoices.id, id))).for("update");
  return row;
}

function assertStatus(row: InvoiceRow, allowed: InvoiceStatus[], action: string) {
  if (!allowed.includes(row.status)) {
    throw new AppError("INVALID_STATE_TRANSITION", `A ${row.status} invoice cannot ${action}`, { status: row.status });
  }
}

/** Only drafts are editable; new items replace the old ones and the totals are recomputed. */
export async function updateInvoice(ctx: ServiceContext, clinic: BillingClinic, id: string, input: UpdateInvoiceInput) {
  await assertReferences(ctx, clinic.id, input);
  return ctx.db.transaction(async (tx) => {
    const current = await lockInvoice(tx, clinic.id, id);
    if (!current) throw AppError.notFound("Invoice", id);
    assertStatus(current, ["draft"], "be edited");
    const now = ctx.clock.now();
    const changes: Partial<typeof invoices.$inferInsert> = { updated_at: now };
    if (input.tutor_id !== undefined) changes.tutor_id = input.tutor_id;
    if (input.visit_id !== undefined) changes.visit_id = input.visit_id;
    if (input.notes !== undefined) changes.notes = input.notes;
    if (input.items) {
      Object.assign(changes, invoiceTotals(input.items, clinic.tax_rate_bps));
      await tx.delete(invoiceItems).where(eq(invoiceItems.invoice_id, id));
      await writeItems(tx, clinic.id, id, input.items, now);
    }
    const [row] = await tx.update(invoices).set(changes).where(eq(invoices.id, id)).returning();
    return invoiceView(row!, await itemsOf({ db: tx, clock: ctx.clock }, id));
  });
}

export async function emitInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  return ctx.db.transaction(async (tx) => {
    const current = await lockInvoice(tx, clinicId, id);
    if (!current) throw AppError.notFound("Invoice", id);
    assertStatus(current, ["draft"], "be emitted");
    const now = ctx.clock.now();
    const [row] = await tx.update(invoices).set({ status: "emitted", emitted_at: now, updated_at: now }).where(eq(invoices.id, id)).returning();
    return invoiceView(row!, await itemsOf({ db: tx, clock: ctx.clock }, id));
  });
}

/** Drafts, and emitted invoices that never received a payment, can be voided. */
export async function voidInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  return ctx.db.transaction(async (tx) => {
    const current = await lockInvoice(tx, clinicId, id);
    if (!current) throw AppError.notFound("Invoice", id);
    assertStatus(current, ["draft", "emitted"], "be voided");
    const [paid] = await tx.select({ n: count() }).from(payments).where(eq(payments.invoice_id, id));
    if (Number(paid?.n ?? 0) > 0) throw new AppError("INVALID_STATE_TRANSITION", "An invoice with payments cannot be voided; refund them instead");
    const now = ctx.clock.now();
    const [row] = await tx.update(invoices).set({ status: "void", voided_at: now, updated_at: now }).where(eq(invoices.id, id)).returning();
    return invoiceView(row!, await itemsOf({ db: tx, clock: ctx.clock }, id));
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
