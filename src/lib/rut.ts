/** Chilean RUT: digits and a módulo-11 check digit (0–9 or K). */
export function rutCheckDigit(body: number): string {
  let sum = 0;
  let factor = 2;
  for (const digit of String(body).split("").reverse()) {
    sum += Number(digit) * factor;
    factor = factor === 7 ? 2 : factor + 1;
  }
  const rest = 11 - (sum % 11);
  return rest === 11 ? "0" : rest === 10 ? "K" : String(rest);
}

/** Formats as 12.345.678-5. */
export function formatRut(body: number): string {
  return `${String(body).replace(/\B(?=(\d{3})+(?!\d))/g, ".")}-${rutCheckDigit(body)}`;
}

/** Accepts 12.345.678-5, 12345678-5 or 123456785 (any case K); returns the formatted RUT or null. */
export function normalizeRut(input: string): string | null {
  const compact = input.replace(/[.\s]/g, "").toUpperCase();
  const match = /^(\d{1,9})-?([\dK])$/.exec(compact);
  if (!match) return null;
  const body = Number(match[1]);
  if (body < 1 || rutCheckDigit(body) !== match[2]) return null;
  return formatRut(body);
}
