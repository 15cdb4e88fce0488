import type { AppContext } from "../../../context";
import { ledgerResource } from "../../../http/ledger-resource";
import { refundModels } from "./model";
import * as service from "./service";

/** Refunds are the owner's. */
export const refundsController = (context: AppContext) =>
  ledgerResource(context, { path: "/refunds", models: refundModels, records: service.refundRecords, service, roles: ["owner"], createSummary: "Refund part or all of a payment (owner; Idempotency-Key accepted)" });
