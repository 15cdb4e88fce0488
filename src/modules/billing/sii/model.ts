import { t } from "elysia";
import { TAX_DOC_TYPES } from "../../../db/schema";
import { DateFilters, DateOnly, Nullable, NullableString, Timestamp, Uuid, ValueList } from "../../../http/common-model";
import { cursorQueryFields } from "../../../http/pagination";
import { ItemInput } from "../invoices/model";
import { record } from "../record-model";

const Environment = t.Union([t.Literal("production"), t.Literal("certification"), t.Literal("test")], { description: "production (CAF signed with the SII's IDK 300 key), certification (IDK 100) or test (a key SII_TEST_CAF_KEYS trusts; no legal value)" });
const DocType = t.Union(TAX_DOC_TYPES.map((d) => t.Literal(d)), { description: "33 factura, 39 boleta, 61 nota de crédito" });

export const TaxDocumentModel = t.Object({
  ...record,
  invoice_id: Uuid,
  doc_type: t.Integer(),
  folio: t.Integer(),
  receiver_rut: NullableString(),
  receiver_name: NullableString(),
  receiver_giro: NullableString(),
  receiver_address: NullableString(),
  receiver_commune: NullableString(),
  referenced_document_id: Nullable(Uuid),
  reference_code: Nullable(t.Integer(), { description: "A nota de crédito's CodRef: 1 anula, 2 corrige texto, 3 corrige montos" }),
  issuer: t.Object(
    { name: NullableString(), legal_name: NullableString(), rut: NullableString(), address: NullableString(), giro: NullableString() },
    { description: "The clinic's issuer data when the document was issued" },
  ),
  currency: t.String(),
  net_amount: t.Integer(),
  tax_amount: t.Integer(),
  total_amount: t.Integer(),
  issued_at: Timestamp,
  environment: Nullable(Environment, { description: "The environment of the CAF the folio came from (null: issued before signed documents)" }),
  signed: t.Boolean({ description: "Whether the document has a signed DTE (its XML, envelope and PDF)" }),
  sent_at: Nullable(Timestamp, { description: "When a sender delivered it to the SII (no sender yet: null)" }),
  track_id: NullableString({ description: "The SII's track id of its upload (null until a sender exists)" }),
  sii_status: NullableString({ description: "The SII's answer (null until a sender exists)" }),
});
export const CreateTaxDocumentBody = t.Object({
  doc_type: DocType,
  invoice_id: t.Optional(Uuid),
  receiver_rut: t.Optional(t.String({ maxLength: 15, examples: ["76.123.456-0"], description: "Factura (required): the receiver's RUT; 66.666.666-6 is refused" })),
  receiver_name: t.Optional(t.String({ minLength: 1, maxLength: 100, description: "Factura (required): razón social; a 61 with code 2: the corrected one" })),
  receiver_giro: t.Optional(t.String({ minLength: 1, maxLength: 40, description: "Factura (required): the receiver's giro (the SII's schema holds 40 characters)" })),
  receiver_address: t.Optional(t.String({ minLength: 1, maxLength: 70, description: "Factura (required)" })),
  receiver_commune: t.Optional(t.String({ minLength: 1, maxLength: 20, description: "Factura (required)" })),
  referenced_document_id: t.Optional(Uuid),
  code: t.Optional(t.Union([t.Literal(1), t.Literal(2), t.Literal(3)], { description: "61 only, CodRef: 1 anula the document in full (default), 2 corrige texto (the corrected receiver_* fields, amount 0), 3 corrige montos (with lines)" })),
  lines: t.Optional(t.Array(ItemInput, { minItems: 1, maxItems: 60, description: "61 with code 3: the credited lines, net prices as invoice items; the IVA is the invoice's rate" })),
  reason: t.Optional(t.String({ minLength: 1, maxLength: 90, description: "61: RazonRef" })),
});
export const TaxDocumentListQuery = t.Object({ ...cursorQueryFields, ...DateFilters, doc_type: t.Optional(ValueList(TAX_DOC_TYPES)), invoice_id: t.Optional(Uuid) });

export type CreateTaxDocumentInput = typeof CreateTaxDocumentBody.static;

/** The models of the three routes, for the ledger-resource factory. */
export const taxDocumentModels = { item: TaxDocumentModel, create: CreateTaxDocumentBody, listQuery: TaxDocumentListQuery };

/** A tax document as the API answers it. */
export type TaxDocumentView = typeof TaxDocumentModel.static;

export const PdfQuery = t.Object({ format: t.Optional(t.Union([t.Literal("letter"), t.Literal("thermal")], { description: "letter (default for 33 and 61) or an 80 mm roll (default for 39)" })) });
export const EnvelopeQuery = t.Object({
  // Required, but checked by the service so that authentication answers first.
  doc_type: t.Optional(t.Union(["33", "39", "61"].map((d) => t.Literal(d)), { description: "Required: 33 or 61 make an EnvioDTE, 39 an EnvioBOLETA" })),
  date: t.Optional(t.String({ format: "date", description: "Required: the clinic's day of issue", examples: ["2026-01-15"] })),
  environment: t.Optional(Environment),
});

export const CafModel = t.Object({
  id: Uuid,
  doc_type: t.Integer(),
  range_from: t.Integer(),
  range_to: t.Integer(),
  next_folio: t.Integer({ description: "The next folio this range hands out (range_to + 1 when used up)" }),
  remaining: t.Integer(),
  authorized_on: DateOnly,
  expires_on: Nullable(DateOnly, { description: "Facturas and notas de crédito: 180 days after authorization; boletas do not expire" }),
  environment: Environment,
  warnings: t.Array(t.String(), { description: "fewer than 10 % of the range remain; the range expires within 15 days; expired; used up" }),
  created_at: Timestamp,
});
export const CafList = t.Object({ data: t.Array(CafModel) });
export const UploadCafBody = t.Object({ xml: t.String({ minLength: 1, maxLength: 20_000, description: "The CAF file as the SII hands it out (<AUTORIZACION>…)" }) });

export const CertificateModel = t.Object({
  subject: t.String(),
  holder_rut: t.String({ description: "The holder's RUT read from the certificate" }),
  issuer: t.String(),
  valid_from: Timestamp,
  valid_to: Timestamp,
  updated_at: Timestamp,
});
export const PutCertificateBody = t.Object({
  pkcs12: t.String({ minLength: 1, maxLength: 60_000, description: "Base64 of the .pfx/.p12 file" }),
  password: t.String({ maxLength: 200 }),
});
