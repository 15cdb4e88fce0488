import type { AppContext } from "../../../context";
import { ledgerResource } from "../../../http/ledger-resource";
import { taxDocumentModels } from "./model";
import * as service from "./service";

export const siiController = (context: AppContext) =>
  ledgerResource(context, { path: "/sii/documents", models: taxDocumentModels, records: service.taxDocumentRecords, service, createSummary: "Issue a 33, 39 or 61 with the next folio (Idempotency-Key accepted)" });
