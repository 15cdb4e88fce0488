import { t } from "elysia";
import { TAX_DOC_TYPES } from "../../../db/schema";
import { DateFilters, Nullable, NullableString, Timestamp, Uuid, ValueList } from "../../../http/common-model";
import { cursorQueryFields } from "../../../http/pagination";
import { record } from "../record-model";

export const TaxDocumentModel = t.Object({
  ...record,
  invoice_id: Uuid,
  doc_type: t.Integer(),
  folio: t.Integer(),
  receiver_rut: NullableString(),
  receiver_name: NullableString(),
  referenced_document_id: Nullable(Uuid),
  issuer: t.Object(
    { name: NullableString(), legal_name: NullableString(), rut: NullableString(), address: NullableString(), giro: NullableString() },
    { description: "The clinic's issuer data when the document was issued" },
  ),
  currency: t.String(),
  net_amount: t.Integer(),
  tax_amount: t.Integer(),
  total_amount: t.Integer(),
  issued_at: Timestamp,
});
export const CreateTaxDocumentBody = t.Object({
  doc_type: t.Union(TAX_DOC_TYPES.map((d) => t.Literal(d)), { description: "33 factura, 39 boleta, 61 nota de crédito" }),
  invoice_id: t.Optional(Uuid),
  receiver_rut: t.Optional(t.String({ maxLength: 15, examples: ["76.123.456-0"] })),
  receiver_name: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  referenced_document_id: t.Optional(Uuid),
});
export const TaxDocumentListQuery = t.Object({ ...cursorQueryFields, ...DateFilters, doc_type: t.Optional(ValueList(TAX_DOC_TYPES)), invoice_id: t.Optional(Uuid) });

export type CreateTaxDocumentInput = typeof CreateTaxDocumentBody.static;

/** The models of the three routes, for the ledger-resource factory. */
export const taxDocumentModels = { item: TaxDocumentModel, create: CreateTaxDocumentBody, listQuery: TaxDocumentListQuery };

/** A tax document as the API answers it. */
export type TaxDocumentView = typeof TaxDocumentModel.static;
