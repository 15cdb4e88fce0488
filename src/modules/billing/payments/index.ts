import type { AppContext } from "../../../context";
import { ledgerResource } from "../../../http/ledger-resource";
import { paymentModels } from "./model";
import * as service from "./service";

export const paymentsController = (context: AppContext) =>
  ledgerResource(context, { path: "/payments", models: paymentModels, records: service.paymentRecords, service, createSummary: "Pay an emitted invoice, up to its balance (Idempotency-Key accepted)" });
