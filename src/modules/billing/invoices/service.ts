import { asc, count, eq, inArray } from "drizzle-orm";
import type { ServiceContext, Tx } from "../../../db/client";
import { assertReferenced, clinicRecords, recordView, withinDays } from "../../../db/clinic-records";
import { invoiceItems, invoices, payments, type InvoiceStatus } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { invoiceTotals, lineTotal } from "../../../lib/money";
import { DOC_TYPE_NAMES } from "../sii/pdf";
import { issueCreditNote, saleDocumentOf } from "../sii/service";
import type { SiiSettings } from "../sii/settings";
import { controlCharacterProblem, normalizeLineBreaks } from "../sii/xml";
import { tutorRecords } from "../../tutors/service";
import { visitRecords } from "../../visits/service";
import { lockInvoice, type InvoiceRow } from "./ledger";
import type { CreateInvoiceInput, UpdateInvoiceInput, VoidInvoiceInput } from "./model";

export const invoiceRecords = clinicRecords(invoices, "Invoice");

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
    balance: row.total_amount - row.credited_amount - row.paid_amount,
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

/**
 * Items as stored: descriptions trimmed, line breaks as LF; any other control character is a 422
 * naming the item, since a description reaches the DTE's text as written.
 */
function cleanItems(items: CreateInvoiceInput["items"]): CreateInvoiceInput["items"] {
  const cleaned = items.map((item) => ({ ...item, description: normalizeLineBreaks(item.description).trim() }));
  const refused = cleaned.flatMap((item, index) => {
    const problem = controlCharacterProblem(item.description, true);
    return problem ? [{ path: `body.items.${index}.description`, message: problem }] : [];
  });
  if (refused.length) throw AppError.validation(refused);
  return cleaned;
}

async function writeItems(tx: Tx, clinicId: string, invoiceId: string, items: CreateInvoiceInput["items"], now: Date) {
  await tx.insert(invoiceItems).values(
    items.map((item, position) => ({
      id: newId(),
      clinic_id: clinicId,
      invoice_id: invoiceId,
      position,
      description: item.description,
      quantity: item.quantity,
      unit_price: item.unit_price,
      total_amount: lineTotal(item.quantity, item.unit_price),
      created_at: now,
      updated_at: now,
    })),
  );
}

/** A draft at the clinic's current IVA rate, which the invoice keeps: later changes of the clinic's rate do not touch it. */
export async function createInvoice(ctx: ServiceContext, clinic: BillingClinic, input: CreateInvoiceInput) {
  const items = cleanItems(input.items);
  await assertReferences(ctx, clinic.id, input);
  const now = ctx.clock.now();
  const id = newId();
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(invoices)
      .values({ id, clinic_id: clinic.id, tutor_id: input.tutor_id, visit_id: input.visit_id ?? null, notes: input.notes ?? null, status: "draft", currency: clinic.currency, tax_rate_bps: clinic.tax_rate_bps, ...invoiceTotals(items, clinic.tax_rate_bps), created_at: now, updated_at: now })
      .returning();
    await writeItems(tx, clinic.id, id, items, now);
    return withItems(tx, row!);
  });
}

export async function getInvoice(ctx: ServiceContext, clinicId: string, id: string) {
  return withItems(ctx.db, await invoiceRecords.find(ctx, clinicId, id));
}

/** The invoice under its row lock, when its status allows `action`: 404 when missing, 409 otherwise. */
async function lockFor(tx: Tx, clinicId: string, id: string, allowed: InvoiceStatus[], action: string): Promise<InvoiceRow> {
  const row = await lockInvoice(tx, clinicId, id);
  if (!row) throw AppError.notFound("Invoice", id);
  if (!allowed.includes(row.status)) throw new AppError("INVALID_STATE_TRANSITION", `A ${row.status} invoice cannot ${action}`, { status: row.status });
  return row;
}

/** Only drafts are editable; new items replace the old ones and the totals are recomputed at the invoice's own rate. */
export async function updateInvoice(ctx: ServiceContext, clinic: BillingClinic, id: string, input: UpdateInvoiceInput) {
  const items = input.items && cleanItems(input.items);
  await assertReferences(ctx, clinic.id, input);
  return ctx.db.transaction(async (tx) => {
    const current = await lockFor(tx, clinic.id, id, ["draft"], "be edited");
    const now = ctx.clock.now();
    // Fields left undefined are not set (Drizzle leaves them out of the UPDATE).
    const changes: Partial<typeof invoices.$inferInsert> = { tutor_id: input.tutor_id, visit_id: input.visit_id, notes: input.notes, updated_at: now };
    if (items) {
      Object.assign(changes, invoiceTotals(items, current.tax_rate_bps));
      await tx.delete(invoiceItems).where(eq(invoiceItems.invoice_id, id));
      await writeItems(tx, clinic.id, id, items, now);
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

/**
 * Drafts, and emitted invoices that never received a payment, can be voided. A sale with a
 * factura or boleta stays valid at the SII until a nota de crédito says otherwise, so such an
 * invoice is voided only with `issue_credit_note`: its 61 (CodRef 1) and the void in one transaction.
 */
export async function voidInvoice(ctx: ServiceContext, settings: SiiSettings, clinicId: string, id: string, input: VoidInvoiceInput = {}) {
  return ctx.db.transaction(async (tx) => {
    await lockFor(tx, clinicId, id, ["draft", "emitted"], "be voided");
    const [paid] = await tx.select({ n: count() }).from(payments).where(eq(payments.invoice_id, id));
    if (Number(paid?.n ?? 0) > 0) throw new AppError("INVALID_STATE_TRANSITION", "An invoice with payments cannot be voided; refund them instead");
    const document = await saleDocumentOf(tx, clinicId, id);
    if (document && !input.issue_credit_note) {
      const name = `${DOC_TYPE_NAMES[document.doc_type]} N° ${document.folio}`;
      throw new AppError("TAX_DOCUMENT_ISSUED", `This invoice has the ${name} (type ${document.doc_type}): void it with its nota de crédito ({"issue_credit_note": true})`, { document_id: document.id, doc_type: document.doc_type, folio: document.folio });
    }
    if (document) await issueCreditNote(ctx, tx, settings, clinicId, { referencedId: document.id, code: 1 });
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
