import { AppError } from "./errors";

/** RFC 3339 in UTC with a `Z`, to the second when there are no milliseconds (CONTRACT §3). */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(".000Z", "Z");
}

/** Recursively turns Dates into RFC 3339 strings so rows can be returned as JSON as they are. */
export function serialize<T>(value: T): Serialized<T> {
  if (value instanceof Date) return rfc3339(value) as Serialized<T>;
  if (Array.isArray(value)) return value.map(serialize) as Serialized<T>;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = serialize(inner);
    return out as Serialized<T>;
  }
  return value as Serialized<T>;
}

export type Serialized<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Serialized<U>[]
    : T extends object
      ? { [K in keyof T]: Serialized<T[K]> }
      : T;

/** Next 00:00 UTC after `now`: quota days are UTC (CONTRACT §3). */
export function nextUtcMidnight(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The UTC instant at which the calendar day `date` (YYYY-MM-DD) starts in `timeZone`.
 * Works by measuring the zone's offset around that day; exact across DST changes.
 */
export function startOfDayInZone(date: string, timeZone: string): Date {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d);
  let instant = guess - zoneOffsetMs(new Date(guess), timeZone);
  // A second pass settles days on which the offset changes.
  instant = guess - zoneOffsetMs(new Date(instant), timeZone);
  return new Date(instant);
}

/** The calendar day (YYYY-MM-DD) that `instant` falls on in `timeZone`. */
export function dayInZone(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    instant,
  );
}

export function addDays(date: string, days: number): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

function zoneOffsetMs(instant: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

function isRealDate(date: string): boolean {
  const parsed = new Date(`${date}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date;
}

/**
 * `date_from`/`date_to` (inclusive calendar days in the clinic's time zone) as a half-open
 * instant range [from, to). A date that does not exist, or an inverted range, is a 422.
 */
export function dayRange(dateFrom: string | undefined, dateTo: string | undefined, timeZone: string): { from?: Date; to?: Date } {
  const fields = [];
  if (dateFrom !== undefined && !isRealDate(dateFrom)) fields.push({ path: "date_from", message: "Not a calendar date (YYYY-MM-DD)" });
  if (dateTo !== undefined && !isRealDate(dateTo)) fields.push({ path: "date_to", message: "Not a calendar date (YYYY-MM-DD)" });
  if (!fields.length && dateFrom && dateTo && dateFrom > dateTo) fields.push({ path: "date_to", message: "Must not be before date_from" });
  if (fields.length) throw AppError.validation(fields, "Invalid date filter");
  return {
    from: dateFrom ? startOfDayInZone(dateFrom, timeZone) : undefined,
    to: dateTo ? startOfDayInZone(addDays(dateTo, 1), timeZone) : undefined,
  };
}
