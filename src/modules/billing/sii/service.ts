import { createPrivateKey, type KeyObject } from "node:crypto";
import { and, asc, eq, gte, inArray, isNull, lt, lte, or } from "drizzle-orm";
import { isUniqueViolation, type ServiceContext, type Tx } from "../../../db/client";
import { clinicRecords, recordView, liveIn, withinDays } from "../../../db/clinic-records";
import { clinics, invoiceItems, siiCafs, siiCertificates, SII_ENVIRONMENTS, taxDocuments, type SiiEnvironment } from "../../../db/schema";
import type { PageRequest } from "../../../db/keyset";
import { newId } from "../../../lib/crypto";
import { AppError } from "../../../lib/errors";
import { invoiceTotals, lineTotal, taxFor } from "../../../lib/money";
import { normalizeRut } from "../../../lib/rut";
import { SecretUnreadableError } from "../../../lib/secrets";
import { dayInZone, serialize, startOfDayInZone, addDays } from "../../../lib/time";
import { lockInvoice, settleInvoice } from "../invoices/ledger";
import { parseCaf } from "./caf";
import { openPkcs12 } from "./certificate";
import { ANONYMOUS_RECEIVER_NAME, ANONYMOUS_RECEIVER_RUT, boletaSplit, localDateTime, MAX_LINES, signedDte, type DteContent, type DteLine, type ReferenceCode } from "./dte";
import { buildEnvelope, ENVELOPE_LIMIT } from "./envelope";
import type { CreateTaxDocumentInput } from "./model";
import { DOC_TYPE_NAMES, printDocument, type PrintFormat } from "./pdf";
import type { SiiSettings } from "./settings";
import type { Signer } from "./signature";
import { elementOf, normalizeLineBreaks, requireDteText, siiRut, textOf, unescapeXml } from "./xml";

export const taxDocumentRecords = clinicRecords(taxDocuments, "Tax document");

type TaxDocumentRow = typeof taxDocuments.$inferSelect;

/** What an erased receiver's kept fields read as, on every read path but the signed document itself. */
export const BLOCKED_RECEIVER = "dato bloqueado";
const RECEIVER_FIELDS = ["receiver_rut", "receiver_name", "receiver_giro", "receiver_address", "receiver_commune"] as const;

/**
 * A document whose receiver (a tutor) had their data erased keeps the receiver fields for the
 * Código Tributario's period, blocked: they read "dato bloqueado" wherever the document is listed
 * or shown. The signed XML and its printed copy stay the legal document as issued.
 */
const withBlockedReceiver = (row: TaxDocumentRow): TaxDocumentRow =>
  row.receiver_blocked_at ? { ...row, ...Object.fromEntries(RECEIVER_FIELDS.filter((field) => row[field] !== null).map((field) => [field, BLOCKED_RECEIVER])) } : row;

export const view = (stored: TaxDocumentRow) => {
  const { issuer_name, issuer_legal_name, issuer_rut, issuer_address, issuer_giro, signed_xml, caf_id: _caf, receiver_blocked_at: _blocked, ...rest } = withBlockedReceiver(stored);
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

/** A CAF's private key, opened and read, or a 409 that says which and why (never the key). */
function openCafKey(settings: SiiSettings, sealed: string): KeyObject {
  const pem = openSecret(settings, sealed, "CAF key");
  try {
    return createPrivateKey(pem);
  } catch {
    throw new AppError("CONFLICT", "The stored CAF key cannot be read; upload the CAF again", { reason: "caf_key_unreadable" });
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
      .where(and(eq(siiCafs.clinic_id, clinicId), eq(siiCafs.environment, caf.environment), eq(siiCafs.doc_type, caf.docType), lte(siiCafs.range_from, caf.rangeTo), gte(siiCafs.range_to, caf.rangeFrom)));
    // Ranges overlap only within one environment: a production range from 1 sits beside a certification one.
    if (overlap) {
      const message = `Folios ${caf.rangeFrom}–${caf.rangeTo} overlap the stored ${caf.environment} range ${overlap.range_from}–${overlap.range_to} of type ${caf.docType}`;
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
  const privateKeyPem = openSecret(settings, row.private_key_encrypted, "certificate key");
  try {
    createPrivateKey(privateKeyPem);
  } catch {
    throw new AppError("CONFLICT", "The stored certificate key cannot be read; upload the certificate again (PUT /api/v1/billing/sii/certificate)", { reason: "certificate_key_unreadable" });
  }
  return { certificatePem: row.certificate_pem, privateKeyPem, holderRut: row.holder_rut };
}

/**
 * The next folio of a type from the clinic's CAFs of one environment: the lowest range with folios left that has not
 * expired. Every usable range of the type is locked until the transaction ends, so concurrent
 * issuers wait in line, and a rolled-back issue gives its folio back: gapless, never reused.
 */
async function takeFolio(tx: Tx, clinicId: string, docType: number, today: string, environment: SiiEnvironment) {
  const usable = await tx
    .select()
    .from(siiCafs)
    .where(and(eq(siiCafs.clinic_id, clinicId), eq(siiCafs.environment, environment), eq(siiCafs.doc_type, docType), lte(siiCafs.next_folio, siiCafs.range_to), or(isNull(siiCafs.expires_on), gte(siiCafs.expires_on, today))))
    .orderBy(asc(siiCafs.range_from))
    .for("update");
  const caf = usable[0];
  if (!caf) {
    const [any] = await tx.select({ id: siiCafs.id }).from(siiCafs).where(and(eq(siiCafs.clinic_id, clinicId), eq(siiCafs.environment, environment), eq(siiCafs.doc_type, docType))).limit(1);
    const why = any ? "its ranges are used up or expired" : "no CAF is stored for it";
    throw new AppError("NO_FOLIOS", `No ${environment} folios left for document type ${docType}: ${why}; upload a CAF (POST /api/v1/billing/sii/cafs)`, { doc_type: docType, environment });
  }
  await tx.update(siiCafs).set({ next_folio: caf.next_folio + 1 }).where(eq(siiCafs.id, caf.id));
  return { caf, folio: caf.next_folio };
}

/** What every DTE carries of its issuer (Formato DTE v2.2, Emisor). */
const ISSUER_FIELDS = ["rut", "legal_name", "giro", "economic_activity_code"] as const;
/** A factura's issuer also carries its address and comuna (DirOrigen, CmnaOrigen: obligatorios for 33). */
const FACTURA_ISSUER_FIELDS = ["address", "commune"] as const;
/** A factura's receiver: RUT, razón social, giro, address and comuna (obligatorios for 33). */
const FACTURA_RECEIVER_FIELDS = ["receiver_rut", "receiver_name", "receiver_giro", "receiver_address", "receiver_commune"] as const;

type Clinic = typeof clinics.$inferSelect;
type StoredReceiver = { rut: string | null; name: string | null; giro: string | null; address: string | null; commune: string | null };

/**
 * The environment a new factura or boleta is issued in: production once the clinic holds any
 * production CAF, else certification, else test. Folios come only from that environment's CAFs,
 * so a certification CAF never lends a folio to a production document, nor the reverse.
 */
async function issuingEnvironment(tx: Tx, clinicId: string): Promise<SiiEnvironment> {
  const rows = await tx.selectDistinct({ environment: siiCafs.environment }).from(siiCafs).where(eq(siiCafs.clinic_id, clinicId));
  const present = new Set(rows.map((row) => row.environment));
  return SII_ENVIRONMENTS.find((environment) => present.has(environment)) ?? "test";
}

interface IssueSpec {
  docType: 33 | 39 | 61;
  invoiceId: string;
  currency: string;
  environment: SiiEnvironment;
  /** The receiver as stored on the document (null RUT: the boleta's anonymous receiver). */
  receiver: StoredReceiver;
  lines: DteLine[];
  amounts: DteContent["amounts"];
  reference?: { document: TaxDocumentRow; code: ReferenceCode; reason: string };
}

/** The issuer's data a document needs, or 409 naming what is missing; its text as a DTE can carry it. */
function requireIssuerData(clinic: Clinic, docType: number) {
  const needed = docType === 33 ? [...ISSUER_FIELDS, ...FACTURA_ISSUER_FIELDS] : ISSUER_FIELDS;
  const missing = needed.filter((field) => !clinic[field]);
  if (missing.length) throw new AppError("CONFLICT", `Set the clinic's ${missing.join(", ")} first (PATCH /api/v1/clinic): a DTE carries them`, { reason: "issuer_data_missing", missing });
  requireDteText({ "clinic.legal_name": clinic.legal_name, "clinic.giro": clinic.giro, "clinic.address": clinic.address, "clinic.commune": clinic.commune });
}

/**
 * Takes the next folio of the document's environment, stamps (TED) and signs the DTE and stores
 * it, all in the caller's transaction: a refusal or a failure leaves no folio used.
 */
async function issueDocument(ctx: ServiceContext, tx: Tx, settings: SiiSettings, clinic: Clinic, spec: IssueSpec): Promise<TaxDocumentRow> {
  const now = ctx.clock.now();
  requireIssuerData(clinic, spec.docType);
  if (spec.amounts.total > 0 && spec.amounts.taxRateBps <= 0) {
    // TasaIVA is at least 0.01 in the SII's schema: a sale without IVA is not a factura or boleta afecta.
    throw new AppError("CONFLICT", "The invoice was computed without IVA (tax_rate_bps 0): a factura, boleta or nota de crédito afecta needs the IVA rate (19 % in Chile)", { reason: "tax_rate_zero" });
  }
  const limit = spec.docType === 39 ? MAX_LINES.boleta : MAX_LINES.dte;
  if (spec.lines.length > limit) {
    throw AppError.validation([{ path: "invoice.items", message: `A document of type ${spec.docType} holds at most ${limit} lines (the SII's schema); this one has ${spec.lines.length}: split the sale into invoices of at most ${limit} lines` }]);
  }
  const signer = await signerFor(tx, settings, clinic.id, now);
  const today = dayInZone(now, clinic.timezone);
  const { caf, folio } = await takeFolio(tx, clinic.id, spec.docType, today, spec.environment);
  const referenced = spec.reference?.document;
  const content: DteContent = {
    docType: spec.docType,
    folio,
    issueDate: today,
    signedAt: localDateTime(now, clinic.timezone),
    issuer: { rut: clinic.rut!, legalName: clinic.legal_name!, giro: clinic.giro!, activityCode: clinic.economic_activity_code!, address: clinic.address, commune: clinic.commune },
    receiver: { ...spec.receiver, rut: spec.receiver.rut ?? ANONYMOUS_RECEIVER_RUT, name: spec.receiver.name ?? (spec.docType === 39 ? null : ANONYMOUS_RECEIVER_NAME) },
    amounts: spec.amounts,
    lines: spec.lines,
    // FchRef is the referenced document's own FchEmis, copied, never recomputed.
    reference: referenced
      ? { docType: referenced.doc_type, folio: referenced.folio, date: (referenced.signed_xml && textOf(referenced.signed_xml, "FchEmis")) || dayInZone(referenced.issued_at, clinic.timezone), code: spec.reference!.code, reason: spec.reference!.reason }
      : undefined,
  };
  const cafKey = openCafKey(settings, caf.private_key_encrypted);
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
      clinic_id: clinic.id,
      invoice_id: spec.invoiceId,
      doc_type: spec.docType,
      folio,
      receiver_rut: spec.receiver.rut,
      receiver_name: spec.receiver.name,
      receiver_giro: spec.receiver.giro,
      receiver_address: spec.receiver.address,
      receiver_commune: spec.receiver.commune,
      referenced_document_id: referenced?.id ?? null,
      // A credit note of a blocked receiver's document carries the same receiver, blocked too.
      receiver_blocked_at: referenced?.receiver_blocked_at ?? null,
      reference_code: spec.reference?.code ?? null,
      currency: spec.currency,
      net_amount: spec.amounts.net,
      tax_amount: spec.amounts.tax,
      total_amount: spec.amounts.total,
      issued_at: now,
      caf_id: caf.id,
      environment: caf.environment,
      signed_xml: xml,
      created_at: now,
      updated_at: now,
    })
    .returning();
  return row!;
}

/** The invoice's lines as a DTE writes them, after the checks the SII's schema makes (text, positive prices). */
async function invoiceLines(tx: Tx, invoiceId: string): Promise<DteLine[]> {
  const items = await tx.select().from(invoiceItems).where(eq(invoiceItems.invoice_id, invoiceId)).orderBy(asc(invoiceItems.position));
  requireDteText(Object.fromEntries(items.map((item, index) => [`invoice.items[${index}].description`, item.description])), items.map((_, index) => `invoice.items[${index}].description`));
  const free = items.flatMap((item, index) => (item.unit_price > 0 ? [] : [{ path: `invoice.items[${index}].unit_price`, message: "A DTE's PrcItem must be positive (the SII's schema): give the line a price or leave it out" }]));
  if (free.length) throw AppError.validation(free);
  return items.map((item) => ({ description: item.description, quantity: item.quantity, unitPrice: item.unit_price, total: item.total_amount }));
}

/** The net n whose n + IVA(n) is the gross amount, or null when no net gives exactly that amount. */
function netForGross(gross: number, taxRateBps: number): number | null {
  const guess = boletaSplit(gross, taxRateBps).net;
  for (const net of [guess, guess - 1, guess + 1]) if (net >= 0 && net + taxFor(net, taxRateBps) === gross) return net;
  return null;
}

/** The nearest gross amounts below and above that a net amount with its IVA gives exactly. */
function reachableAround(gross: number, taxRateBps: number) {
  const guess = boletaSplit(gross, taxRateBps).net;
  const totals = [guess - 2, guess - 1, guess, guess + 1, guess + 2].filter((net) => net >= 0).map((net) => net + taxFor(net, taxRateBps));
  return { below: Math.max(...totals.filter((total) => total < gross)), above: Math.min(...totals.filter((total) => total > gross)) };
}

export interface CreditNoteRequest {
  referencedId: string;
  /** 1 anula, 2 corrige texto, 3 corrige montos; left out: 1 when `amount` is the whole document with nothing credited yet, else 3. */
  code?: ReferenceCode;
  /** Code 3: the credited lines (net prices, as invoice items). */
  lines?: { description: string; quantity: number; unit_price: number }[];
  /** Code 3: the credited amount, IVA included (a refund's). */
  amount?: number;
  /** Code 2: the receiver's corrected fields. */
  corrected?: { name?: string; giro?: string; address?: string; commune?: string };
  reason?: string;
}

const CORRECTED_LABELS = { name: "Razón social", giro: "Giro", address: "Dirección", commune: "Comuna" } as const;

/**
 * A nota de crédito (61) over a factura or boleta, in the caller's transaction, under the lock of
 * the sale's invoice: the sum of a document's credit notes never exceeds it (409), money still
 * paid beyond what the credit leaves must be refunded first (409), and the invoice takes the
 * credit (`credited` when nothing is left). Its folio comes from the referenced document's environment.
 */
export async function issueCreditNote(ctx: ServiceContext, tx: Tx, settings: SiiSettings, clinicId: string, request: CreditNoteRequest): Promise<TaxDocumentRow> {
  const [referenced] = await tx.select().from(taxDocuments).where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.id, request.referencedId)));
  if (!referenced || referenced.doc_type === 61) throw AppError.validation([{ path: "body.referenced_document_id", message: "No such factura or boleta in this clinic" }]);
  const invoice = await lockInvoice(tx, clinicId, referenced.invoice_id);
  const clinic = await clinicRow({ db: tx }, clinicId);
  const taxRateBps = invoice?.tax_rate_bps ?? clinic.tax_rate_bps;
  const notes = await tx
    .select({ id: taxDocuments.id, total: taxDocuments.total_amount })
    .from(taxDocuments)
    .where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.referenced_document_id, referenced.id)));
  const credited = notes.reduce((sum, note) => sum + note.total, 0);
  const code: ReferenceCode = request.code ?? (request.amount === referenced.total_amount && credited === 0 ? 1 : 3);
  const referencedName = `${DOC_TYPE_NAMES[referenced.doc_type]} N° ${referenced.folio}`;
  let lines: DteLine[];
  let amounts: DteContent["amounts"];
  let receiver: StoredReceiver = { rut: referenced.receiver_rut, name: referenced.receiver_name, giro: referenced.receiver_giro, address: referenced.receiver_address, commune: referenced.receiver_commune };
  let reason: string;
  if (code === 1) {
    if (credited > 0) {
      throw new AppError("CONFLICT", `This document already has notas de crédito for ${credited} of its ${referenced.total_amount}: credit what remains with code 3`, { reason: "already_credited", document_id: notes[0]!.id, credited });
    }
    amounts = { net: referenced.net_amount, tax: referenced.tax_amount, total: referenced.total_amount, taxRateBps };
    lines = await invoiceLines(tx, referenced.invoice_id);
    // Beyond the 60 lines a DTE holds, the credit note cancels the sale in one line of its net amount.
    if (lines.length > MAX_LINES.dte) lines = [{ description: `Anula ${referencedName}`, quantity: 1, unitPrice: amounts.net, total: amounts.net }];
    reason = request.reason ?? "Anula documento de referencia";
  } else if (code === 2) {
    if (referenced.doc_type !== 33) throw AppError.validation([{ path: "body.code", message: "Code 2 corrects a factura's receiver data; a boleta has none" }]);
    const corrected = Object.entries(request.corrected ?? {}).filter(([, value]) => value) as [keyof typeof CORRECTED_LABELS, string][];
    if (!corrected.length) throw AppError.validation([{ path: "body.receiver_name", message: "Code 2 needs the corrected receiver fields (receiver_name, receiver_giro, receiver_address, receiver_commune)" }]);
    receiver = { ...receiver, ...Object.fromEntries(corrected) };
    amounts = { net: 0, tax: 0, total: 0, taxRateBps };
    lines = [{ description: ["Corrige datos del receptor", ...corrected.map(([field, value]) => `${CORRECTED_LABELS[field]}: ${value}`)].join("\n"), quantity: 0, unitPrice: 0, total: 0 }];
    reason = request.reason ?? "Corrige texto del documento de referencia";
  } else if (request.lines) {
    const totals = invoiceTotals(request.lines, taxRateBps);
    amounts = { net: totals.net_amount, tax: totals.tax_amount, total: totals.total_amount, taxRateBps };
    lines = request.lines.map((line) => ({ description: normalizeLineBreaks(line.description.trim()), quantity: line.quantity, unitPrice: line.unit_price, total: lineTotal(line.quantity, line.unit_price) }));
    reason = request.reason ?? "Corrige montos";
  } else if (request.amount !== undefined) {
    const net = netForGross(request.amount, taxRateBps);
    if (net === null) {
      const { below, above } = reachableAround(request.amount, taxRateBps);
      throw new AppError("CONFLICT", `No net amount plus its IVA at ${taxRateBps / 100} % makes exactly ${request.amount}, so no nota de crédito can credit it: use ${below} or ${above}`, { reason: "amount_not_creditable", amount: request.amount, nearest: [below, above] });
    }
    amounts = { net, tax: request.amount - net, total: request.amount, taxRateBps };
    lines = [{ description: `Devolución parcial ${referencedName}`, quantity: 1, unitPrice: net, total: net }];
    reason = request.reason ?? "Devolución parcial";
  } else {
    throw AppError.validation([{ path: "body.lines", message: "Code 3 needs the credited lines" }]);
  }
  if (credited + amounts.total > referenced.total_amount) {
    const remaining = referenced.total_amount - credited;
    throw new AppError("CONFLICT", `The notas de crédito of this document would exceed it: ${remaining} of its ${referenced.total_amount} remains to credit, this one is ${amounts.total}`, { reason: "credit_exceeds_document", document_id: referenced.id, document_total: referenced.total_amount, credited, remaining });
  }
  if (invoice && amounts.total > 0) {
    const due = invoice.total_amount - invoice.credited_amount - amounts.total;
    if (invoice.paid_amount > due) {
      throw new AppError("CONFLICT", `Refund the invoice's payments first: ${invoice.paid_amount} is still paid on it`, { invoice_id: invoice.id, refund_needed: invoice.paid_amount - due });
    }
    await settleInvoice(tx, invoice, { credited: invoice.credited_amount + amounts.total }, ctx.clock.now());
  }
  const environment = (referenced.environment as SiiEnvironment | null) ?? (await issuingEnvironment(tx, clinicId));
  return issueDocument(ctx, tx, settings, clinic, { docType: 61, invoiceId: referenced.invoice_id, currency: referenced.currency, environment, receiver, lines, amounts, reference: { document: referenced, code, reason } });
}

/** The invoice's live factura or boleta, if it has one. */
export async function saleDocumentOf(tx: Tx, clinicId: string, invoiceId: string) {
  const [row] = await tx
    .select()
    .from(taxDocuments)
    .where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.invoice_id, invoiceId), inArray(taxDocuments.doc_type, [33, 39])));
  return row;
}

/** A factura's receiver from the request: a valid RUT other than the generic one (422), and every field the SII marks mandatory (409 naming the missing ones). */
function facturaReceiver(input: CreateTaxDocumentInput): StoredReceiver {
  const missing = FACTURA_RECEIVER_FIELDS.filter((field) => !input[field]?.trim());
  const rut = input.receiver_rut ? normalizeRut(input.receiver_rut) : null;
  if (input.receiver_rut && !rut) throw AppError.validation([{ path: "body.receiver_rut", message: "A factura needs the receiver's RUT with a valid check digit" }]);
  if (rut && siiRut(rut) === ANONYMOUS_RECEIVER_RUT) throw AppError.validation([{ path: "body.receiver_rut", message: "66.666.666-6 stands for a boleta's anonymous buyer; a factura needs the receiver's own RUT" }]);
  if (missing.length) throw new AppError("CONFLICT", `A factura needs the receiver's ${missing.join(", ")}`, { reason: "receiver_data_missing", missing });
  return { rut, name: input.receiver_name!.trim(), giro: input.receiver_giro!.trim(), address: input.receiver_address!.trim(), commune: input.receiver_commune!.trim() };
}

/**
 * Issues a 39 (boleta) or 33 (factura, with its receiver) for an emitted or paid invoice, once per
 * invoice; or a 61 (nota de crédito) over an earlier 33/39: code 1 cancels it, 2 corrects the
 * receiver's text, 3 credits lines. The folio comes from a stored CAF of the document's
 * environment; the DTE is stamped (TED) and signed, and stored as signed.
 */
export async function create(ctx: ServiceContext, settings: SiiSettings, clinicId: string, input: CreateTaxDocumentInput) {
  const receiverText = { "body.receiver_name": input.receiver_name, "body.receiver_giro": input.receiver_giro, "body.receiver_address": input.receiver_address, "body.receiver_commune": input.receiver_commune };
  if (input.doc_type === 61) {
    const fields = [];
    if (!input.referenced_document_id) fields.push({ path: "body.referenced_document_id", message: "A nota de crédito references the document it credits" });
    if (input.lines && input.code !== 3) fields.push({ path: "body.lines", message: "Lines are credited with code 3" });
    if (fields.length) throw AppError.validation(fields);
    requireDteText({ ...receiverText, "body.reason": input.reason, ...Object.fromEntries((input.lines ?? []).map((line, index) => [`body.lines.${index}.description`, normalizeLineBreaks(line.description)])) }, (input.lines ?? []).map((_, index) => `body.lines.${index}.description`));
    const corrected = { name: input.receiver_name?.trim(), giro: input.receiver_giro?.trim(), address: input.receiver_address?.trim(), commune: input.receiver_commune?.trim() };
    return ctx.db.transaction(async (tx) => {
      const referenced = input.invoice_id ? (await tx.select({ invoice_id: taxDocuments.invoice_id }).from(taxDocuments).where(and(liveIn(taxDocuments, clinicId), eq(taxDocuments.id, input.referenced_document_id!))))[0] : undefined;
      if (referenced && input.invoice_id !== referenced.invoice_id) throw AppError.validation([{ path: "body.invoice_id", message: "Must be the referenced document's invoice" }]);
      return view(await issueCreditNote(ctx, tx, settings, clinicId, { referencedId: input.referenced_document_id!, code: input.code ?? 1, lines: input.lines, corrected, reason: input.reason }));
    });
  }
  if (!input.invoice_id) throw AppError.validation([{ path: "body.invoice_id", message: "Required for doc_type 33 and 39" }]);
  const receiver: StoredReceiver = input.doc_type === 33 ? facturaReceiver(input) : { rut: null, name: null, giro: null, address: null, commune: null };
  requireDteText(receiverText);
  try {
    return await ctx.db.transaction(async (tx) => {
      const invoice = await lockInvoice(tx, clinicId, input.invoice_id!);
      if (!invoice) throw AppError.validation([{ path: "body.invoice_id", message: "No such invoice in this clinic" }]);
      if (invoice.status !== "emitted" && invoice.status !== "paid") {
        throw new AppError("INVALID_STATE_TRANSITION", `A ${invoice.status} invoice cannot get a tax document`, { status: invoice.status });
      }
      const existing = await saleDocumentOf(tx, clinicId, invoice.id);
      if (existing) throw new AppError("CONFLICT", "This invoice already has a factura or boleta", { document_id: existing.id });
      // The issuer as the clinic's settings say now; a later change does not rewrite this document.
      const clinic = await clinicRow({ db: tx }, clinicId);
      const lines = await invoiceLines(tx, invoice.id);
      const row = await issueDocument(ctx, tx, settings, clinic, {
        docType: input.doc_type as 33 | 39,
        invoiceId: invoice.id,
        currency: invoice.currency,
        environment: await issuingEnvironment(tx, clinicId),
        receiver,
        lines,
        amounts: { net: invoice.net_amount, tax: invoice.tax_amount, total: invoice.total_amount, taxRateBps: invoice.tax_rate_bps },
      });
      return view(row);
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

/**
 * The Carátula's resolution: the clinic's number and date in production; outside it the number is
 * 0 (the SII's certification), but the date is the clinic's too. A missing one is a 409, never invented.
 */
function resolutionFor(clinic: typeof clinics.$inferSelect, environment: SiiEnvironment) {
  const missing = [...(environment === "production" && clinic.sii_resolution_number == null ? ["sii_resolution_number"] : []), ...(clinic.sii_resolution_date ? [] : ["sii_resolution_date"])];
  if (missing.length) throw new AppError("CONFLICT", `Set the clinic's ${missing.join(" and ")} first (PATCH /api/v1/clinic): the envelope and the printed copy carry the SII's resolution`, { reason: "issuer_data_missing", missing });
  return { number: environment === "production" ? clinic.sii_resolution_number! : 0, date: clinic.sii_resolution_date! };
}

async function envelopeOf(ctx: ServiceContext, settings: SiiSettings, clinicId: string, docType: number, environment: SiiEnvironment, documents: string[]) {
  const clinic = await clinicRow(ctx, clinicId);
  const now = ctx.clock.now();
  const signer = await signerFor(ctx.db, settings, clinicId, now);
  return buildEnvelope(
    { docType, issuerRut: clinic.rut!, senderRut: signer.holderRut, resolution: resolutionFor(clinic, environment), signedAt: localDateTime(now, clinic.timezone), documents },
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

/** The printed copy, read from the signed DTE itself so it shows exactly what was signed. */
export async function documentPdf(ctx: ServiceContext, clinicId: string, id: string, format: PrintFormat | undefined) {
  const row = await signedDocument(ctx, clinicId, id);
  const clinic = await clinicRow(ctx, clinicId);
  const xml = row.signed_xml;
  const ted = elementOf(xml, "TED")!;
  const emisor = elementOf(xml, "Emisor")!;
  const receptor = elementOf(xml, "Receptor")!;
  const reference = elementOf(xml, "Referencia");
  const read = (within: string, name: string) => unescapeXml(textOf(within, name)) || null;
  const lines = [...xml.matchAll(/<Detalle>[\s\S]*?<\/Detalle>/g)].map(([line]) => ({
    description: [read(line, "NmbItem"), read(line, "DscItem")].filter(Boolean).join("\n"),
    quantity: Number(textOf(line, "QtyItem") ?? 0),
    unitPrice: Number(textOf(line, "PrcItem") ?? 0),
    total: Number(textOf(line, "MontoItem")),
  }));
  const issueDate = textOf(xml, "FchEmis")!;
  const rate = textOf(xml, "TasaIVA");
  const bytes = await printDocument(
    {
      docType: row.doc_type,
      folio: row.folio,
      issueDate,
      issuedAt: row.issued_at,
      environment: row.environment,
      issuer: {
        rut: row.issuer_rut ?? "",
        legalName: read(emisor, "RznSoc") ?? read(emisor, "RznSocEmisor") ?? "",
        giro: read(emisor, "GiroEmis") ?? read(emisor, "GiroEmisor") ?? "",
        address: read(emisor, "DirOrigen"),
        commune: read(emisor, "CmnaOrigen"),
      },
      receiver: { rut: textOf(receptor, "RUTRecep")!, name: read(receptor, "RznSocRecep"), giro: read(receptor, "GiroRecep"), address: read(receptor, "DirRecep"), commune: read(receptor, "CmnaRecep") },
      lines,
      amounts: { net: Number(textOf(xml, "MntNeto") ?? 0), tax: Number(textOf(xml, "IVA") ?? 0), total: Number(textOf(xml, "MntTotal")), taxRate: rate === null ? null : Number(rate) },
      reference: reference ? { docType: Number(textOf(reference, "TpoDocRef")), folio: Number(textOf(reference, "FolioRef")), date: textOf(reference, "FchRef")!, code: Number(textOf(reference, "CodRef") ?? 1) } : null,
      resolution: resolutionFor(clinic, row.environment),
      ted,
    },
    format ?? (row.doc_type === 39 ? "thermal" : "letter"),
  );
  return { bytes, filename: `${row.doc_type}-${row.folio}.pdf` };
}
