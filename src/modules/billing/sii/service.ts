import { and, eq, inArray, sql } from "drizzle-orm";
import { isUniqueViolation, type ServiceContext, type Tx } from "../../../db/client";
import { clinicRecords, recordView, liveIn, withinDays } from "../../../db/clinic-records";
import { clinics, folioCounters, invoices, taxDocuments } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { normalizeRut } from "../../../lib/rut";
import { lockInvoice } from "../invoices/service";
import type { CreateTaxDocumentInput } from "./model";

export const taxDocumentRecords = clinicRecords(taxDocuments, "Tax document");

export const view = (row: typeof taxDocuments.$inferSelect) => {
  const { issuer_name, issuer_legal_name, issuer_rut, issuer_address, issuer_giro, ...rest } = row;
  return { ...recordView(rest), issuer: { name: issuer_name, legal_name: issuer_legal_name, rut: issuer_rut, address: issuer_address, giro: issuer_giro } };
};

/**
 * The next folio for a clinic and document type. The upsert takes the counter row's lock until
 * the transaction ends, so concurrent issuers wait in line, and a rolled-back issue gives its
 * folio back: folios run 1, 2, 3… with no gaps and no duplicates.
 */
async function nextFolio(tx: Tx, clinicId: string, docType: number): Promise<number> {
  const [row] = await tx
    .insert(folioCounters)
    .values({ clinic_id: clinicId, doc_type: docType, last_folio: 1 })
    .onConflictDoUpdate({ target: [folioCounters.clinic_id, folioCounters.doc_type], set: { last_folio: sql`${folioCounters.last_folio} + 1` } })
    .returning({ folio: folioCounters.last_folio });
  return row!.folio;
}

/**
 * Issues a 39 (boleta) or 33 (factura, with the receiver's RUT and name) for an emitted or paid
 * invoice, once per invoice; or a 61 (nota de crédito) crediting an earlier 33/39 in full, once.
 */
export async function create(ctx: ServiceContext, clinicId: string, input: CreateTaxDocumentInput) {
  const fields = [];
  let receiverRut: string | null = null;
  if (input.doc_type === 33) {
    receiverRut = input.receiver_rut ? normalizeRut(input.receiver_rut) : null;
    if (!receiverRut) fields.push({ path: "body.receiver_rut", message: "A factura needs the receiver's RUT with a valid check digit" });
    if (!input.receiver_name) fields.push({ path: "body.receiver_name", message: "A factura needs the receiver's name" });
  }
  if (input.doc_type === 61 && !input.referenced_document_id) fields.push({ path: "body.referenced_document_id", message: "A nota de crédito references the document it credits" });
  if (input.doc_type !== 61 && !input.invoice_id) fields.push({ path: "body.invoice_id", message: "Required for doc_type 33 and 39" });
  if (fields.length) throw AppError.validation(fields);

  try {
    return await ctx.db.transaction(async (tx) => {
      const now = ctx.clock.now();
      let source: { invoice_id: string; currency: string; net_amount: number; tax_amount: number; total_amount: number };
      if (input.doc_type === 61) {
        const [referenced] = await tx.select().from(taxDocuments).where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.id, input.referenced_document_id!)));
        if (!referenced || referenced.doc_type === 61) throw AppError.validation([{ path: "body.referenced_document_id", message: "No such factura or boleta in this clinic" }]);
        if (input.invoice_id && input.invoice_id !== referenced.invoice_id) throw AppError.validation([{ path: "body.invoice_id", message: "Must be the referenced document's invoice" }]);
        const invoice = await lockInvoice(tx, clinicId, referenced.invoice_id);
        const [credited] = await tx.select({ id: taxDocuments.id }).from(taxDocuments).where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.referenced_document_id, referenced.id)));
        if (credited) throw new AppError("CONFLICT", "This document already has a nota de crédito", { document_id: credited.id });
        // A nota de crédito cancels the sale in full: money still held for it must go back first.
        if (invoice && invoice.paid_amount > 0) {
          throw new AppError("CONFLICT", `Refund the invoice's payments first: ${invoice.paid_amount} is still paid on it`, { invoice_id: invoice.id, refund_needed: invoice.paid_amount });
        }
        if (invoice) await tx.update(invoices).set({ status: "credited", updated_at: now }).where(eq(invoices.id, invoice.id));
        source = referenced;
      } else {
        const invoice = await lockInvoice(tx, clinicId, input.invoice_id!);
        if (!invoice) throw AppError.validation([{ path: "body.invoice_id", message: "No such invoice in this clinic" }]);
        if (invoice.status !== "emitted" && invoice.status !== "paid") {
          throw new AppError("INVALID_STATE_TRANSITION", `A ${invoice.status} invoice cannot get a tax document`, { status: invoice.status });
        }
        const [existing] = await tx
          .select({ id: taxDocuments.id })
          .from(taxDocuments)
          .where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.invoice_id, invoice.id), inArray(taxDocuments.doc_type, [33, 39])));
        if (existing) throw new AppError("CONFLICT", "This invoice already has a factura or boleta", { document_id: existing.id });
        source = { invoice_id: invoice.id, currency: invoice.currency, net_amount: invoice.net_amount, tax_amount: invoice.tax_amount, total_amount: invoice.total_amount };
      }
      // The issuer as the clinic's settings say now; a later change does not rewrite this document.
      const [issuer] = await tx
        .select({ issuer_name: clinics.name, issuer_legal_name: clinics.legal_name, issuer_rut: clinics.rut, issuer_address: clinics.address, issuer_giro: clinics.giro })
        .from(clinics)
        .where(eq(clinics.id, clinicId));
      const [row] = await tx
        .insert(taxDocuments)
        .values({
          id: newId(),
          ...issuer,
          clinic_id: clinicId,
          invoice_id: source.invoice_id,
          doc_type: input.doc_type,
          folio: await nextFolio(tx, clinicId, input.doc_type),
          receiver_rut: receiverRut,
          receiver_name: input.doc_type === 33 ? input.receiver_name!.trim() : null,
          referenced_document_id: input.doc_type === 61 ? input.referenced_document_id! : null,
          currency: source.currency,
          net_amount: source.net_amount,
          tax_amount: source.tax_amount,
          total_amount: source.total_amount,
          issued_at: now,
          created_at: now,
          updated_at: now,
        })
        .returning();
      return view(row!);
    });
  } catch (error) {
    // The unique index is the last word if two issuers raced past the checks.
    if (isUniqueViolation(error)) throw new AppError("CONFLICT", "This invoice already has a factura or boleta");
    throw error;
  }
}

export function list(ctx: ServiceContext, clinicId: string, timeZone: string, filters: { doc_type?: string; invoice_id?: string; date_from?: string; date_to?: string }, page: PageRequest) {
  return taxDocumentRecords.page(
    ctx,
    clinicId,
    [
      filters.doc_type ? inArray(taxDocuments.doc_type, filters.doc_type.split(",").map(Number)) : undefined,
      filters.invoice_id ? eq(taxDocuments.invoice_id, filters.invoice_id) : undefined,
      ...withinDays(taxDocuments.issued_at, filters, timeZone),
    ],
    page,
  );
}
