import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { invoicesController } from "./invoices";
import { paymentsController } from "./payments";
import { refundsController } from "./refunds";
import { siiController } from "./sii";
import { siiSettings } from "./sii/settings";

/** Billing: invoices, payments, refunds and SII tax documents; money in integers. */
export const billingModule = (context: AppContext) => {
  // The secret box and the trusted CAF keys belong to this app (tests build apps with their own);
  // voids and refunds issue notas de crédito with them too.
  const settings = siiSettings(context.config, context.secrets);
  return new Elysia({ prefix: "/billing" })
    .use(invoicesController(context, settings))
    .use(paymentsController(context))
    .use(refundsController(context, settings))
    .use(siiController(context, settings));
};
