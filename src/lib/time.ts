import { AppError } from "./errors";

/** RFC 3339 in UTC with a `Z`, to the second when there are no milliseconds. */
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

/** Next 00:00 UTC after `now`: quota days are UTC. */
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
  return new Date(localMidnight(date, offsetReader(timeZone)));
}

function localMidnight(date: string, offsetAt: (instant: number) => number): number {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const midnightAsUtc = Date.UTC(y, m - 1, d);
  // Midnight read with the offsets in force half a day either side; one of them, or both when
  // midnight happens twice (the earlier wins), puts the local time exactly at 00:00.
  const candidates = [midnightAsUtc - offsetAt(midnightAsUtc - 12 * 3_600_000), midnightAsUtc - offsetAt(midnightAsUtc + 12 * 3_600_000)];
  const exact = candidates.filter((instant) => instant + offsetAt(instant) === midnightAsUtc);
  if (exact.length) return Math.min(...exact);
  // Clocks skip midnight: the day starts where they jump, the first instant at or past 00:00 local.
  let low = Math.min(...candidates);
  let high = Math.max(...candidates);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (middle + offsetAt(middle) >= midnightAsUtc) high = middle;
    else low = middle;
  }
  return high;
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

/**
 * Reads a zone's UTC offset (ms, local minus UTC) at instants. Building the formatter costs far
 * more than using it, so code that reads many offsets of one zone takes one reader.
 */
export function offsetReader(timeZone: string): (instant: number) => number {
  const format = offsetFormat(timeZone);
  return (instant) => {
    const parts = format.formatToParts(instant);
    let year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    for (const part of parts) {
      if (part.type === "year") year = Number(part.value);
      else if (part.type === "month") month = Number(part.value);
      else if (part.type === "day") day = Number(part.value);
      else if (part.type === "hour") hour = Number(part.value);
      else if (part.type === "minute") minute = Number(part.value);
      else if (part.type === "second") second = Number(part.value);
    }
    const asUtc = Date.UTC(year, month - 1, day, hour, minute, second);
    return asUtc - Math.floor(instant / 1000) * 1000;
  };
}

function offsetFormat(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** Dates and timestamps outside these years are refused: PostgreSQL and `Intl` handle them all. */
export const YEAR_MIN = 1900;
export const YEAR_MAX = 2999;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?$/;

function calendarProblem(year: number, month: number, day: number): string | null {
  if (year < YEAR_MIN || year > YEAR_MAX) return `Year must be between ${YEAR_MIN} and ${YEAR_MAX}`;
  if (month < 1 || month > 12) return "Month must be 01–12";
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return `Not a calendar day: ${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")} has ${daysInMonth} days`;
  return null;
}

/**
 * The one date rule: `YYYY-MM-DD`, a real calendar day, years 1900–2999.
 * Returns why `text` is refused, or null when it is a date.
 */
export function dateProblem(text: string): string | null {
  const match = DATE.exec(text);
  if (!match) return "Expected a date as YYYY-MM-DD";
  return calendarProblem(Number(match[1]), Number(match[2]), Number(match[3]));
}

/**
 * The one timestamp rule: RFC 3339 with `Z` or an offset (`2026-01-15T14:30:00-03:00`), a real
 * calendar day, hours 00–23 (no 24:00), seconds 00–59 (no leap seconds), years 1900–2999.
 * Returns why `text` is refused, or null when it is an instant.
 */
export function timestampProblem(text: string): string | null {
  const match = TIMESTAMP.exec(text);
  if (!match) return "Expected an RFC 3339 timestamp such as 2026-01-15T14:30:00Z";
  const [, y, mo, d, h, mi, s, , offset] = match;
  if (!offset) return "A timestamp needs Z or an offset such as -03:00 (without one its instant is ambiguous)";
  const calendar = calendarProblem(Number(y), Number(mo), Number(d));
  if (calendar) return calendar;
  if (Number(h) > 23) return "Hours must be 00–23";
  if (Number(mi) > 59) return "Minutes must be 00–59";
  if (s !== undefined && Number(s) > 59) return "Seconds must be 00–59 (leap seconds are not accepted)";
  if (offset !== "Z" && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return "The offset must be within ±23:59";
  return null;
}

/**
 * `date_from`/`date_to` (inclusive calendar days in the clinic's time zone) as a half-open
 * instant range [from, to). A date that does not exist, or an inverted range, is a 422.
 */
export function dayRange(dateFrom: string | undefined, dateTo: string | undefined, timeZone: string): { from?: Date; to?: Date } {
  const fields = [];
  const fromProblem = dateFrom === undefined ? null : dateProblem(dateFrom);
  const toProblem = dateTo === undefined ? null : dateProblem(dateTo);
  if (fromProblem) fields.push({ path: "query.date_from", message: fromProblem });
  if (toProblem) fields.push({ path: "query.date_to", message: toProblem });
  if (!fields.length && dateFrom && dateTo && dateFrom > dateTo) fields.push({ path: "query.date_to", message: "Must not be before date_from" });
  if (fields.length) throw AppError.validation(fields, "Invalid date filter");
  return {
    from: dateFrom ? startOfDayInZone(dateFrom, timeZone) : undefined,
    to: dateTo ? startOfDayInZone(addDays(dateTo, 1), timeZone) : undefined,
  };
}

/** ISO weekday (1 = Monday … 7 = Sunday) of a calendar day YYYY-MM-DD. */
export function isoWeekday(date: string): number {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return ((new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7) + 1;
}

/** "HH:MM" (00:00–24:00) as minutes after midnight, or null when it is not a time of day. */
export function minutesOfDay(text: string): number | null {
  const match = /^(\d{2}):(\d{2})$/.exec(text);
  if (!match) return null;
  const minutes = Number(match[1]) * 60 + Number(match[2]);
  return Number(match[2]) < 60 && minutes <= 24 * 60 ? minutes : null;
}


/** A half-open range of instants in epoch milliseconds. */
export interface InstantRange {
  start: number;
  end: number;
}

/**
 * Where the zone's offset changes inside [from, to), a span of about a day: found by halving down
 * to the millisecond. No zone changes its offset twice within a day and back again, so equal
 * offsets at both ends mean no change.
 */
function offsetChanges(from: number, to: number, offsetAt: (instant: number) => number): number[] {
  const fromOffset = offsetAt(from);
  if (fromOffset === offsetAt(to - 1)) return [];
  let low = from;
  let high = to - 1;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(middle) === fromOffset) low = middle;
    else high = middle;
  }
  return [high, ...offsetChanges(high, to, offsetAt)];
}

/** A calendar day in a time zone, cut where its offset changes: local time is instant + offset within each piece. */
export interface ZoneDay {
  date: string;
  /** The day's local midnight read as if it were UTC. */
  localMidnightAsUtc: number;
  pieces: { start: number; end: number; offset: number }[];
}

/** The calendar day `date` in `timeZone`, measured once so that many intervals can be placed on it. */
export function zoneDay(date: string, timeZone: string, offsetAt = offsetReader(timeZone)): ZoneDay {
  const dayStart = localMidnight(date, offsetAt);
  const dayEnd = localMidnight(addDays(date, 1), offsetAt);
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const bounds = [dayStart, ...offsetChanges(dayStart, dayEnd, offsetAt), dayEnd];
  const pieces = [];
  for (let i = 0; i + 1 < bounds.length; i++) pieces.push({ start: bounds[i]!, end: bounds[i + 1]!, offset: offsetAt(bounds[i]!) });
  return { date, localMidnightAsUtc: Date.UTC(y, m - 1, d), pieces };
}

/**
 * The instants of a day whose local time of day lies in [startMinute, endMinute) (0–1440):
 * exact across offset changes. A local time that does not exist (clocks jumped over it)
 * contributes nothing, and one that happens twice (clocks set back) contributes both of its
 * instants, so the result is one range or, on such a day, up to two.
 */
export function localTimeRanges(day: ZoneDay, startMinute: number, endMinute: number): InstantRange[] {
  const ranges: InstantRange[] = [];
  if (endMinute <= startMinute) return ranges;
  for (const piece of day.pieces) {
    const start = Math.max(piece.start, day.localMidnightAsUtc + startMinute * 60_000 - piece.offset);
    const end = Math.min(piece.end, day.localMidnightAsUtc + endMinute * 60_000 - piece.offset);
    if (end <= start) continue;
    const last = ranges[ranges.length - 1];
    if (last && last.end === start) last.end = end;
    else ranges.push({ start, end });
  }
  return ranges;
}

/** Local date and time of day ("YYYY-MM-DD", minutes after midnight) of an instant in `timeZone`. */
export function localDateTime(instant: number, offsetAt: (instant: number) => number): { date: string; minute: number } {
  const local = instant + offsetAt(instant);
  const iso = new Date(local).toISOString();
  return { date: iso.slice(0, 10), minute: Math.floor((local - Date.UTC(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)) - 1, Number(iso.slice(8, 10)))) / 60_000) };
}
