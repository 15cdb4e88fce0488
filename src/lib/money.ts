import { AppError } from "./errors";

/**
 * Money is an integer in the smallest currency unit; these are the only places amounts are
 * combined, so rounding happens once, the same way everywhere. Arithmetic runs on BigInt and
 * every result is checked to fit a JSON number exactly (±(2^53 − 1)).
 */

/** The largest net amount of one invoice: with tax of at most 100 % its total stays below 2^53. */
export const MAX_INVOICE_NET = 1_000_000_000_000_000;

/** A BigInt (or a database's numeric/bigint text) as a number, refusing anything a number would round. */
export function exactInteger(value: bigint | string | number): number {
  const big = typeof value === "bigint" ? value : BigInt(typeof value === "number" ? Math.trunc(value) : value);
  if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < -BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError("An amount exceeds 2^53 − 1 and cannot be shown exactly");
  }
  return Number(big);
}

export const lineTotal = (quantity: number, unitPrice: number): number => exactInteger(BigInt(quantity) * BigInt(unitPrice));

/** Tax on a net amount at `bps` basis points, rounded half-up once per invoice, in integers. */
export const taxFor = (net: number, bps: number): number => exactInteger((BigInt(net) * BigInt(bps) + 5_000n) / 10_000n);

/** Net, tax and total of an invoice's lines; a net past MAX_INVOICE_NET is a 422 naming `body.items`. */
export function invoiceTotals(items: { quantity: number; unit_price: number }[], bps: number) {
  const net = items.reduce((sum, item) => sum + BigInt(item.quantity) * BigInt(item.unit_price), 0n);
  if (net > BigInt(MAX_INVOICE_NET)) {
    throw AppError.validation([{ path: "body.items", message: `The invoice's net amount must not exceed ${MAX_INVOICE_NET}` }], "Invoice too large");
  }
  const tax = taxFor(Number(net), bps);
  return { net_amount: Number(net), tax_amount: tax, total_amount: exactInteger(net + BigInt(tax)) };
}
