/**
 * Money is an integer in the smallest currency unit (CONTRACT §3); these are the only places
 * amounts are combined, so rounding happens once, the same way everywhere.
 */
export const lineTotal = (quantity: number, unitPrice: number): number => quantity * unitPrice;

/** Tax on a net amount at `bps` basis points, rounded half-up once per invoice, in integers. */
export const taxFor = (net: number, bps: number): number => Math.floor((net * bps + 5_000) / 10_000);

export function invoiceTotals(items: { quantity: number; unit_price: number }[], bps: number) {
  const net = items.reduce((sum, item) => sum + lineTotal(item.quantity, item.unit_price), 0);
  const tax = taxFor(net, bps);
  return { net_amount: net, tax_amount: tax, total_amount: net + tax };
}
