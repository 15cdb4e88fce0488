import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { invoicesController } from "./invoices";
import { paymentsController } from "./payments";
import { refundsController } from "./refunds";
import { siiController } from "./sii";

/** Billing: invoices, payments, refunds and SII tax documents; money in integers. */
export const billingModule = (context: AppContext) =>
  new Elysia({ prefix: "/billing" })
    .use(invoicesController(context))
    .use(paymentsController(context))
    .use(refundsController(context))
    .use(siiController(context));
