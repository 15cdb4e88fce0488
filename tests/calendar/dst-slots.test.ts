import { expect, test } from "bun:test";
import fc from "fast-check";
import { freeSlots, type SlotRules } from "../../src/modules/availability/slots";
import type { WeeklyInterval } from "../../src/db/schema";
import { addDays, dayInZone, isoWeekday } from "../../src/lib/time";

// Slots across every offset change 2020–2035 that the runtime's time-zone database (Intl) knows,
// checked against an oracle that walks the day minute by minute and asks Intl for local time.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** Local wall time of an instant, straight from Intl (the oracle's only source); one memo per zone for the file. */
const intlLocals = new Map<string, (instant: number) => { date: string; minute: number }>();
const intlLocal = (timeZone: string) => intlLocals.get(timeZone) ?? (intlLocals.set(timeZone, makeIntlLocal(timeZone)), intlLocals.get(timeZone)!);
function makeIntlLocal(timeZone: string) {
  const format = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" });
  const cache = new Map<number, { date: string; minute: number }>();
  return (instant: number) => {
    const key = Math.floor(instant / MINUTE);
    let hit = cache.get(key);
    if (!hit) {
      const parts = Object.fromEntries(format.formatToParts(key * MINUTE).map((p) => [p.type, p.value]));
      hit = { date: `${parts.year}-${parts.month}-${parts.day}`, minute: Number(parts.hour) * 60 + Number(parts.minute) };
      cache.set(key, hit);
    }
    return hit;
  };
}

/** Every instant 2020–2035 at which `timeZone` changes its offset, found by probing Intl daily and halving. */
function transitions(timeZone: string): number[] {
  const format = new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" });
  const offset = (t: number) => format.formatToParts(t).find((p) => p.type === "timeZoneName")!.value;
  const found: number[] = [];
  for (let t = Date.UTC(2020, 0, 1); t < Date.UTC(2036, 0, 1); t += DAY) {
    if (offset(t) === offset(t + DAY)) continue;
    let low = t;
    let high = t + DAY;
    while (high - low > MINUTE) {
      const middle = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
      if (offset(middle) === offset(low)) low = middle;
      else high = middle;
    }
    found.push(high);
  }
  return found;
}

const toHHMM = (m: number) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;

/** A week of intervals: per weekday up to three, on 5-minute marks, apart from each other. */
const weekArbitrary = fc.array(fc.uniqueArray(fc.integer({ min: 0, max: 288 }), { minLength: 0, maxLength: 6 }), { minLength: 7, maxLength: 7 }).map((days) => {
  const intervals: WeeklyInterval[] = [];
  days.forEach((marks, i) => {
    const sorted = [...marks].sort((a, b) => a - b);
    for (let k = 0; k + 1 < sorted.length; k += 2) {
      // A gap of at least one mark between intervals keeps them from touching.
      if (k > 0 && sorted[k]! <= sorted[k - 1]! + 1) continue;
      if (sorted[k + 1]! > sorted[k]!) intervals.push({ weekday: i + 1, start: toHHMM(sorted[k]! * 5), end: toHHMM(sorted[k + 1]! * 5) });
    }
  });
  return intervals;
});

const rulesArbitrary = fc.record({ duration: fc.integer({ min: 1, max: 24 }).map((n) => n * 5), step: fc.option(fc.integer({ min: 1, max: 12 }).map((n) => n * 5), { nil: undefined }) });

function minutesOf(hhmm: string) {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

/** The oracle: minute by minute over the days, the runs of working time (one interval, unbroken), and the slots they hold. */
function expectedStarts(timeZone: string, from: string, to: string, intervals: WeeklyInterval[], duration: number, step: number): number[] {
  const local = intlLocal(timeZone);
  const starts: number[] = [];
  // Days in a zone start within ±15 hours of UTC midnight.
  const scanFrom = Date.parse(`${from}T00:00:00Z`) - 15 * 60 * MINUTE;
  const scanTo = Date.parse(`${addDays(to, 1)}T00:00:00Z`) + 15 * 60 * MINUTE;
  let run: { start: number; key: string } | null = null;
  const close = (end: number) => {
    if (!run) return;
    for (let s = run.start; s + duration * MINUTE <= end; s += step * MINUTE) starts.push(s);
    run = null;
  };
  // The intervals in minutes and each date's weekday, worked out once rather than at every minute.
  const inMinutes = intervals.map((i) => ({ weekday: i.weekday, start: minutesOf(i.start), end: minutesOf(i.end) }));
  const weekdays = new Map<string, number>();
  const weekdayOf = (date: string) => weekdays.get(date) ?? (weekdays.set(date, isoWeekday(date)), weekdays.get(date)!);
  for (let t = scanFrom; t < scanTo; t += MINUTE) {
    const { date, minute } = local(t);
    const index = date >= from && date <= to ? inMinutes.findIndex((i) => i.weekday === weekdayOf(date) && i.start <= minute && minute < i.end) : -1;
    const key = index < 0 ? "" : `${date}#${index}`;
    if (run && run.key !== key) close(t);
    if (!run && key) run = { start: t, key };
  }
  close(scanTo);
  return starts.sort((a, b) => a - b);
}

const ZONES = ["America/Santiago", "Europe/Madrid", "America/New_York", "Australia/Lord_Howe"];

for (const timeZone of ZONES) {
  test(`${timeZone}: slots around every offset change 2020–2035 are real, exist locally, appear once and are all there`, () => {
    const changes = transitions(timeZone);
    expect(changes.length).toBeGreaterThanOrEqual(timeZone === "America/Santiago" ? 25 : 30);
    for (const change of changes) {
      // The local day before the change, the day of it and the day after.
      const day = dayInZone(new Date(change), timeZone);
      const from = addDays(day, -1);
      const to = addDays(day, 1);
      fc.assert(
        fc.property(weekArbitrary, rulesArbitrary, (intervals, { duration, step }) => {
          const rules: SlotRules = { duration_minutes: duration, buffer_before_minutes: 0, buffer_after_minutes: 0, min_notice_minutes: 0, max_advance_days: 100_000, room_required: false };
          const slots = freeSlots({ timeZone, from, to, now: 0, rules, stepMinutes: step ?? duration, vets: [{ id: "v", intervals, busy: [] }], rooms: [], closedDays: new Set() });
          const starts = slots.map((s) => s.start);
          // Never twice, always the real length, and exactly the oracle's.
          expect(new Set(starts).size).toBe(starts.length);
          for (const slot of slots) expect(slot.end - slot.start).toBe(duration * MINUTE);
          expect(starts).toEqual(expectedStarts(timeZone, from, to, intervals, duration, step ?? duration));
        }),
        { numRuns: timeZone === "America/Santiago" ? 12 : 4, seed: change % 2_147_483_647 },
      );
    }
  }, 120_000);
}

test("Santiago's changes at local midnight: no slot at 00:xx on the day clocks skip it, the repeated 23:xx offered once per real instant", () => {
  const rules: SlotRules = { duration_minutes: 30, buffer_before_minutes: 0, buffer_after_minutes: 0, min_notice_minutes: 0, max_advance_days: 100_000, room_required: false };
  const allWeek = (start: string, end: string) => [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, start, end }));
  const query = (from: string, intervals: WeeklyInterval[]) =>
    freeSlots({ timeZone: "America/Santiago", from, to: from, now: 0, rules, stepMinutes: 30, vets: [{ id: "v", intervals, busy: [] }], rooms: [], closedDays: new Set() });
  // 2026-09-06: 00:00 becomes 01:00 (-04 → -03); 00:00–02:00 local holds one real hour.
  expect(query("2026-09-06", allWeek("00:00", "02:00")).map((s) => new Date(s.start).toISOString())).toEqual(["2026-09-06T04:00:00.000Z", "2026-09-06T04:30:00.000Z"]);
  // 2026-04-04: 24:00 becomes 23:00 again (-03 → -04); 23:00–24:00 local holds two real hours.
  expect(query("2026-04-04", allWeek("23:00", "24:00")).map((s) => new Date(s.start).toISOString())).toEqual(["2026-04-05T02:00:00.000Z", "2026-04-05T02:30:00.000Z", "2026-04-05T03:00:00.000Z", "2026-04-05T03:30:00.000Z"]);
});
