import { createPrivateKey } from "node:crypto";
import { and, asc, eq, gte, inArray, isNull, lt, lte, or } from "drizzle-orm";
import { isUniqueViolation, type ServiceContext, type Tx } from "../../../db/client";
import { clinicRecords, recordView, liveIn, withinDays } from "../../../db/clinic-records";
import { clinics, invoiceItems, invoices, siiCafs, siiCertificates, taxDocuments, type SiiEnvironment } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { normalizeRut } from "../../../lib/rut";
import { SecretUnreadableError } from "../../../lib/secrets";
import { dayInZone, serialize, startOfDayInZone, addDays } from "../../../lib/time";
import { lockInvoice } from "../invoices/service";
import { parseCaf } from "./caf";
import { openPkcs12 } from "./certificate";
import { ANONYMOUS_RECEIVER_RUT, localDateTime, signedDte, type DteContent } from "./dte";
import { buildEnvelope, ENVELOPE_LIMIT } from "./envelope";
import type { CreateTaxDocumentInput } from "./model";
import { printDocument, type PrintFormat } from "./pdf";
import type { SiiSettings } from "./settings";
import type { Signer } from "./signature";
import { elementOf, requireLatin1, textOf } from "./xml";

export const taxDocumentRecords = clinicRecords(taxDocuments, "Tax document");

type TaxDocumentRow = typeof taxDocuments.$inferSelect;

export const view = (row: TaxDocumentRow) => {
  const { issuer_name, issuer_legal_name, issuer_rut, issuer_address, issuer_giro, signed_xml, caf_id: _caf, ...rest } = row;
  return {
    ...recordView(rest),
    environment: rest.environment as SiiEnvironment | null,
    signed: signed_xml !== null,
    sent_at: rest.sent_at ? serialize(rest.sent_at) : null,
    issuer: { name: issuer_name, legal_name: issuer_legal_name, rut: issuer_rut, address: issuer_address, giro: issuer_giro },
  };
};

/** A stored secret opened, or a 409 that says the SECRETS_KEY does not open it (never the secret). */
function openSecret(settings: SiiSettings, sealed: string, what: string): string {
  try {
    return settings.secrets.open(sealed);
  } catch (error) {
    if (error instanceof SecretUnreadableError) throw new AppError("CONFLICT", `The stored ${what} cannot be decrypted with this SECRETS_KEY; upload it again or start with the key it was stored with`, { reason: "secrets_key_mismatch" });
    throw error;
  }
}

const FOLIO_WARNING_FRACTION = 0.1;
const EXPIRY_WARNING_DAYS = 15;

/** A CAF as the API lists it, with its warnings (fewer than 10 % left, expiring within 15 days). */
export function cafView(row: typeof siiCafs.$inferSelect, today: string) {
  const size = row.range_to - row.range_from + 1;
  const remaining = row.range_to - row.next_folio + 1;
  const warnings: string[] = [];
  if (remaining === 0) warnings.push("used up");
  else if (remaining < size * FOLIO_WARNING_FRACTION) warnings.push(`fewer than 10 % of the range remain (${remaining})`);
  if (row.expires_on && row.expires_on < today) warnings.push(`expired on ${row.expires_on}`);
  else if (row.expires_on && row.expires_on <= addDays(today, EXPIRY_WARNING_DAYS)) warnings.push(`expires on ${row.expires_on}`);
  const { id, doc_type, range_from, range_to, next_folio, authorized_on, expires_on, environment, created_at } = row;
  return { id, doc_type, range_from, range_to, next_folio, remaining, authorized_on, expires_on, environment, warnings, created_at: serialize(created_at) };
}

async function clinicRow(ctx: Pick<ServiceContext, "db">, clinicId: string) {
  const [clinic] = await ctx.db.select().from(clinics).where(eq(clinics.id, clinicId));
  if (!clinic) throw AppError.notFound("Clinic");
  return clinic;
}

/** Stores a CAF after checking it (signature, RUT, type, range overlap, expiry); refusals are 422 with `details.reason`. */
export async function uploadCaf(ctx: ServiceContext, settings: SiiSettings, clinicId: string, xml: string) {
  return ctx.db.transaction(async (tx) => {
    // The clinic row's lock serializes uploads, so two overlapping ranges cannot both pass the check.
    const [clinic] = await tx.select().from(clinics).where(eq(clinics.id, clinicId)).for("update");
    if (!clinic) throw AppError.notFound("Clinic");
    const today = dayInZone(ctx.clock.now(), clinic.timezone);
    const caf = parseCaf(xml, settings.trust, clinic.rut, today);
    const [overlap] = await tx
      .select({ id: siiCafs.id, range_from: siiCafs.range_from, range_to: siiCafs.range_to })
      .from(siiCafs)
      .where(and(eq(siiCafs.clinic_id, clinicId), eq(siiCafs.doc_type, caf.docType), lte(siiCafs.range_from, caf.rangeTo), gte(siiCafs.range_to, caf.rangeFrom)));
    if (overlap) {
      const message = `Folios ${caf.rangeFrom}–${caf.rangeTo} overlap the stored range ${overlap.range_from}–${overlap.range_to} of type ${caf.docType}`;
      throw new AppError("VALIDATION_FAILED", message, { reason: "overlap", caf_id: overlap.id, fields: [{ path: "body.xml", message }] });
    }
    const [row] = await tx
      .insert(siiCafs)
      .values({
        id: newId(),
        clinic_id: clinicId,
        doc_type: caf.docType,
        range_from: caf.rangeFrom,
        range_to: caf.rangeTo,
        next_folio: caf.rangeFrom,
        authorized_on: caf.authorizedOn,
        expires_on: caf.expiresOn,
        environment: caf.environment,
        caf_xml: caf.cafXml,
        private_key_encrypted: settings.secrets.seal(caf.privateKeyPem),
        created_at: ctx.clock.now(),
      })
      .returning();
    return cafView(row!, today);
  });
}

export async function listCafs(ctx: ServiceContext, clinicId: string) {
  const clinic = await clinicRow(ctx, clinicId);
  const today = dayInZone(ctx.clock.now(), clinic.timezone);
  const rows = await ctx.db.select().from(siiCafs).where(eq(siiCafs.clinic_id, clinicId)).orderBy(asc(siiCafs.doc_type), asc(siiCafs.range_from));
  return { data: rows.map((row) => cafView(row, today)) };
}

const certificateView = (row: typeof siiCertificates.$inferSelect) => ({
  subject: row.subject,
  holder_rut: row.holder_rut,
  issuer: row.issuer,
  valid_from: serialize(row.valid_from),
  valid_to: serialize(row.valid_to),
  updated_at: serialize(row.updated_at),
});

/** Opens, checks and stores the clinic's certificate (replacing the previous one); its key only encrypted. */
export async function putCertificate(ctx: ServiceContext, settings: SiiSettings, clinicId: string, input: { pkcs12: string; password: string }) {
  const now = ctx.clock.now();
  const opened = openPkcs12(input.pkcs12, input.password, now);
  const values = {
    subject: opened.subject,
    holder_rut: opened.holderRut,
    issuer: opened.issuer,
    valid_from: opened.validFrom,
    valid_to: opened.validTo,
    certificate_pem: opened.certificatePem,
    private_key_encrypted: settings.secrets.seal(opened.privateKeyPem),
    updated_at: now,
  };
  const [row] = await ctx.db
    .insert(siiCertificates)
    .values({ clinic_id: clinicId, ...values, created_at: now })
    .onConflictDoUpdate({ target: siiCertificates.clinic_id, set: values })
    .returning();
  return certificateView(row!);
}

export async function getCertificate(ctx: ServiceContext, clinicId: string) {
  const [row] = await ctx.db.select().from(siiCertificates).where(eq(siiCertificates.clinic_id, clinicId));
  if (!row) throw AppError.notFound("SII certificate");
  return certificateView(row);
}

/** The clinic's signer, or a 409 saying to upload a certificate first. */
async function signerFor(db: Pick<ServiceContext, "db">["db"], settings: SiiSettings, clinicId: string, now: Date): Promise<Signer & { holderRut: string }> {
  const [row] = await db.select().from(siiCertificates).where(eq(siiCertificates.clinic_id, clinicId));
  if (!row) throw new AppError("CONFLICT", "Upload the clinic's digital certificate first (PUT /api/v1/billing/sii/certificate)", { reason: "certificate_missing" });
  if (row.valid_to < now) throw new AppError("CONFLICT", `The clinic's certificate expired on ${serialize(row.valid_to)}; upload a current one`, { reason: "certificate_expired" });
  return { certificatePem: row.certificate_pem, privateKeyPem: openSecret(settings, row.private_key_encrypted, "certificate key"), holderRut: row.holder_rut };
}

/**
 * The next folio of a type from the clinic's CAFs: the lowest range with folios left that has not
 * expired. Every usable range of the type is locked until the transaction ends, so concurrent
 * issuers wait in line, and a rolled-back issue gives its folio back: gapless, never reused.
 */
async function takeFolio(tx: Tx, clinicId: string, docType: number, today: string) {
  const usable = await tx
    .select()
    .from(siiCafs)
    .where(and(eq(siiCafs.clinic_id, clinicId), eq(siiCafs.doc_type, docType), lte(siiCafs.next_folio, siiCafs.range_to), or(isNull(siiCafs.expires_on), gte(siiCafs.expires_on, today))))
    .orderBy(asc(siiCafs.range_from))
    .for("update");
  const caf = usable[0];
  if (!caf) {
    const [any] = await tx.select({ id: siiCafs.id }).from(siiCafs).where(and(eq(siiCafs.clinic_id, clinicId), eq(siiCafs.doc_type, docType))).limit(1);
    const why = any ? "its ranges are used up or expired" : "no CAF is stored for it";
    throw new AppError("NO_FOLIOS", `No folios left for document type ${docType}: ${why}; upload a CAF (POST /api/v1/billing/sii/cafs)`, { doc_type: docType });
  }
  await tx.update(siiCafs).set({ next_folio: caf.next_folio + 1 }).where(eq(siiCafs.id, caf.id));
  return { caf, folio: caf.next_folio };
}

const ISSUER_FIELDS = { rut: "rut", legal_name: "legal_name", giro: "giro", economic_activity_code: "economic_activity_code" } as const;

/**
 * Issues a 39 (boleta) or 33 (factura, with the receiver's RUT and name) for an emitted or paid
 * invoice, once per invoice; or a 61 (nota de crédito) crediting an earlier 33/39 in full, once.
 * The folio comes from a stored CAF; the DTE is stamped (TED) and signed, and stored as signed.
 */
export async function create(ctx: ServiceContext, settings: SiiSettings, clinicId: string, input: CreateTaxDocumentInput) {
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
  const factura = input.doc_type === 33;
  const receiver = {
    name: factura ? input.receiver_name!.trim() : null,
    giro: factura ? input.receiver_giro?.trim() || null : null,
    address: factura ? input.receiver_address?.trim() || null : null,
    commune: factura ? input.receiver_commune?.trim() || null : null,
  };
  requireLatin1({ "body.receiver_name": receiver.name, "body.receiver_giro": receiver.giro, "body.receiver_address": receiver.address, "body.receiver_commune": receiver.commune });

  try {
    return await ctx.db.transaction(async (tx) => {
      const now = ctx.clock.now();
      let source: { invoice_id: string; currency: string; net_amount: number; tax_amount: number; total_amount: number };
      let referenced: TaxDocumentRow | undefined;
      if (input.doc_type === 61) {
        [referenced] = await tx.select().from(taxDocuments).where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.id, input.referenced_document_id!)));
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
      const clinic = await clinicRow({ db: tx }, clinicId);
      const missing = Object.values(ISSUER_FIELDS).filter((field) => !clinic[field]);
      if (missing.length) throw new AppError("CONFLICT", `Set the clinic's ${missing.join(", ")} first (PATCH /api/v1/clinic): a DTE carries them`, { reason: "issuer_data_missing", missing });
      requireLatin1({ "clinic.legal_name": clinic.legal_name, "clinic.giro": clinic.giro, "clinic.address": clinic.address, "clinic.commune": clinic.commune });
      const items = await tx.select().from(invoiceItems).where(eq(invoiceItems.invoice_id, source.invoice_id)).orderBy(asc(invoiceItems.position));
      requireLatin1(Object.fromEntries(items.map((item, index) => [`invoice.items[${index}].description`, item.description])));
      const signer = await signerFor(tx, settings, clinicId, now);
      const today = dayInZone(now, clinic.timezone);
      const { caf, folio } = await takeFolio(tx, clinicId, input.doc_type, today);
      const content: DteContent = {
        docType: input.doc_type,
        folio,
        issueDate: today,
        signedAt: localDateTime(now, clinic.timezone),
        issuer: { rut: clinic.rut!, legalName: clinic.legal_name!, giro: clinic.giro!, activityCode: clinic.economic_activity_code!, address: clinic.address, commune: clinic.commune },
        receiver: referenced
          ? { rut: referenced.receiver_rut ?? ANONYMOUS_RECEIVER_RUT, name: referenced.receiver_name, giro: referenced.receiver_giro, address: referenced.receiver_address, commune: referenced.receiver_commune }
          : { rut: receiverRut ?? ANONYMOUS_RECEIVER_RUT, ...receiver },
        amounts: { net: source.net_amount, tax: source.tax_amount, total: source.total_amount, taxRateBps: clinic.tax_rate_bps },
        lines: items.map((item) => ({ description: item.description, quantity: item.quantity, unitPrice: item.unit_price, total: item.total_amount })),
        reference: referenced ? { docType: referenced.doc_type, folio: referenced.folio, date: dayInZone(referenced.issued_at, clinic.timezone), reason: "Anula documento de referencia" } : undefined,
      };
      const cafKey = createPrivateKey(openSecret(settings, caf.private_key_encrypted, "CAF key"));
      const { xml } = signedDte(content, { xml: caf.caf_xml, key: cafKey }, signer);
      const [row] = await tx
        .insert(taxDocuments)
        .values({
          id: newId(),
          issuer_name: clinic.name,
          issuer_legal_name: clinic.legal_name,
          issuer_rut: clinic.rut,
          issuer_address: clinic.address,
          issuer_giro: clinic.giro,
          clinic_id: clinicId,
          invoice_id: source.invoice_id,
          doc_type: input.doc_type,
          folio,
          receiver_rut: referenced ? referenced.receiver_rut : receiverRut,
          receiver_name: referenced ? referenced.receiver_name : receiver.name,
          receiver_giro: referenced ? referenced.receiver_giro : receiver.giro,
          receiver_address: referenced ? referenced.receiver_address : receiver.address,
          receiver_commune: referenced ? referenced.receiver_commune : receiver.commune,
          referenced_document_id: referenced ? referenced.id : null,
          currency: source.currency,
          net_amount: source.net_amount,
          tax_amount: source.tax_amount,
          total_amount: source.total_amount,
          issued_at: now,
          caf_id: caf.id,
          environment: caf.environment,
          signed_xml: xml,
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

/** The service the ledger-resource routes call, with the settings issuing needs. */
export const taxDocumentService = (settings: SiiSettings) => ({
  create: (ctx: ServiceContext, clinicId: string, input: CreateTaxDocumentInput) => create(ctx, settings, clinicId, input),
  list,
  view,
});

/** A document with its signed DTE, or 404 / 409 (issued before documents were signed). */
async function signedDocument(ctx: ServiceContext, clinicId: string, id: string) {
  const row = await taxDocumentRecords.find(ctx, clinicId, id);
  if (!row.signed_xml) throw new AppError("CONFLICT", "This document was issued before documents were signed: it has no DTE", { reason: "not_signed" });
  return row as TaxDocumentRow & { signed_xml: string; environment: SiiEnvironment };
}

export async function documentXml(ctx: ServiceContext, clinicId: string, id: string): Promise<string> {
  return (await signedDocument(ctx, clinicId, id)).signed_xml;
}

/** The Carátula's resolution: the clinic's in production; number 0 while certifying or testing. */
function resolutionFor(clinic: typeof clinics.$inferSelect, environment: SiiEnvironment, fallbackDate: string) {
  if (environment === "production") {
    if (clinic.sii_resolution_number == null || !clinic.sii_resolution_date) {
      throw new AppError("CONFLICT", "Set the clinic's sii_resolution_number and sii_resolution_date first (PATCH /api/v1/clinic)", { reason: "issuer_data_missing", missing: ["sii_resolution_number", "sii_resolution_date"] });
    }
    return { number: clinic.sii_resolution_number, date: clinic.sii_resolution_date };
  }
  return { number: 0, date: clinic.sii_resolution_date ?? fallbackDate };
}

async function envelopeOf(ctx: ServiceContext, settings: SiiSettings, clinicId: string, docType: number, environment: SiiEnvironment, documents: string[]) {
  const clinic = await clinicRow(ctx, clinicId);
  const now = ctx.clock.now();
  const signer = await signerFor(ctx.db, settings, clinicId, now);
  return buildEnvelope(
    { docType, issuerRut: clinic.rut!, senderRut: signer.holderRut, resolution: resolutionFor(clinic, environment, dayInZone(now, clinic.timezone)), signedAt: localDateTime(now, clinic.timezone), documents },
    signer,
  );
}

export async function documentEnvelope(ctx: ServiceContext, settings: SiiSettings, clinicId: string, id: string) {
  const row = await signedDocument(ctx, clinicId, id);
  return envelopeOf(ctx, settings, clinicId, row.doc_type, row.environment, [row.signed_xml]);
}

/** The clinic day's signed documents of one type in one envelope (never mixing environments). */
export async function dayEnvelope(ctx: ServiceContext, settings: SiiSettings, clinicId: string, query: { doc_type?: string; date?: string; environment?: SiiEnvironment }) {
  const missing = (["doc_type", "date"] as const).filter((name) => !query[name]).map((name) => ({ path: `query.${name}`, message: "Required" }));
  if (missing.length) throw AppError.validation(missing);
  const date = query.date!;
  const clinic = await clinicRow(ctx, clinicId);
  const docType = Number(query.doc_type);
  const from = startOfDayInZone(date, clinic.timezone);
  const to = startOfDayInZone(addDays(date, 1), clinic.timezone);
  const limit = docType === 39 ? ENVELOPE_LIMIT.boleta : ENVELOPE_LIMIT.dte;
  const rows = await ctx.db
    .select({ signed_xml: taxDocuments.signed_xml, environment: taxDocuments.environment })
    .from(taxDocuments)
    .where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.doc_type, docType), gte(taxDocuments.issued_at, from), lt(taxDocuments.issued_at, to), query.environment ? eq(taxDocuments.environment, query.environment) : undefined))
    .orderBy(asc(taxDocuments.folio))
    .limit(limit + 1);
  const signed = rows.filter((row): row is { signed_xml: string; environment: SiiEnvironment } => row.signed_xml !== null);
  if (!signed.length) throw AppError.notFound(`Signed documents of type ${docType} on ${query.date}`);
  const environments = [...new Set(signed.map((row) => row.environment))];
  if (environments.length > 1) throw new AppError("CONFLICT", `That day has documents of several environments (${environments.join(", ")}): choose one with ?environment=`, { reason: "mixed_environments", environments });
  if (rows.length > limit) throw new AppError("CONFLICT", `More than ${limit} documents of type ${docType} that day: one envelope holds at most ${limit}`, { reason: "envelope_too_large", limit });
  return envelopeOf(ctx, settings, clinicId, docType, environments[0]!, signed.map((row) => row.signed_xml));
}

const unescape = (text: string | null) => (text ?? "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** The printed copy, read from the signed DTE itself so it shows exactly what was signed. */
export async function documentPdf(ctx: ServiceContext, clinicId: string, id: string, format: PrintFormat | undefined) {
  const row = await signedDocument(ctx, clinicId, id);
  const clinic = await clinicRow(ctx, clinicId);
  const xml = row.signed_xml;
  const ted = elementOf(xml, "TED")!;
  const emisor = elementOf(xml, "Emisor")!;
  const receptor = elementOf(xml, "Receptor")!;
  const reference = elementOf(xml, "Referencia");
  const lines = [...xml.matchAll(/<Detalle>[\s\S]*?<\/Detalle>/g)].map(([line]) => ({
    description: unescape(textOf(line, "NmbItem")),
    quantity: Number(textOf(line, "QtyItem")),
    unitPrice: Number(textOf(line, "PrcItem")),
    total: Number(textOf(line, "MontoItem")),
  }));
  const issueDate = textOf(xml, "FchEmis")!;
  const bytes = await printDocument(
    {
      docType: row.doc_type,
      folio: row.folio,
      issueDate,
      issuedAt: row.issued_at,
      environment: row.environment,
      issuer: {
        rut: row.issuer_rut ?? "",
        legalName: unescape(textOf(emisor, "RznSoc") ?? textOf(emisor, "RznSocEmisor")),
        giro: unescape(textOf(emisor, "GiroEmis") ?? textOf(emisor, "GiroEmisor")),
        address: unescape(textOf(emisor, "DirOrigen")) || null,
        commune: unescape(textOf(emisor, "CmnaOrigen")) || null,
      },
      receiver: {
        rut: textOf(receptor, "RUTRecep")!,
        name: unescape(textOf(receptor, "RznSocRecep")) || null,
        giro: unescape(textOf(receptor, "GiroRecep")) || null,
        address: unescape(textOf(receptor, "DirRecep")) || null,
        commune: unescape(textOf(receptor, "CmnaRecep")) || null,
      },
      lines,
      amounts: { net: row.net_amount, tax: row.tax_amount, total: row.total_amount },
      reference: reference ? { docType: Number(textOf(reference, "TpoDocRef")), folio: Number(textOf(reference, "FolioRef")), date: textOf(reference, "FchRef")! } : null,
      resolution: resolutionFor(clinic, row.environment, issueDate),
      ted,
    },
    format ?? (row.doc_type === 39 ? "thermal" : "letter"),
  );
  return { bytes, filename: `${row.doc_type}-${row.folio}.pdf` };
}
