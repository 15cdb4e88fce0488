import type { AppContext } from "../../../context";
import { ledgerResource } from "../../../http/ledger-resource";
import type { SiiSettings } from "../sii/settings";
import { refundModels } from "./model";
import * as service from "./service";

/** Refunds are the owner's; on a sale with a factura or boleta each one issues its nota de crédito. */
export const refundsController = (context: AppContext, settings: SiiSettings) =>
  ledgerResource(context, {
    path: "/refunds",
    models: refundModels,
    records: service.refundRecords,
    service: service.refundService(settings),
    roles: ["owner"],
    createSummary: "Refund part or all of a payment; on a sale with a factura or boleta, with its nota de crédito (owner; Idempotency-Key accepted)",
  });
