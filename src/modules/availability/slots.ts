import type { WeeklyInterval } from "../../db/schema";
import { addDays, isoWeekday, localTimeRanges, minutesOfDay, offsetReader, zoneDay, type InstantRange } from "../../lib/time";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** What a slot must respect of its appointment type. */
export interface SlotRules {
  duration_minutes: number;
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  min_notice_minutes: number;
  max_advance_days: number;
  room_required: boolean;
}

export interface VetSchedule {
  id: string;
  /** The vet's weekly hours in the clinic's local time. */
  intervals: WeeklyInterval[];
  /** Time off and the time held by the vet's live visits (their buffers included). */
  busy: InstantRange[];
}

export interface RoomSchedule {
  id: string;
  busy: InstantRange[];
}

export interface SlotQuery {
  timeZone: string;
  /** Inclusive calendar days in the clinic's time zone. */
  from: string;
  to: string;
  now: number;
  rules: SlotRules;
  /** Minutes between slot starts. */
  stepMinutes: number;
  vets: VetSchedule[];
  rooms: RoomSchedule[];
  /** Days the clinic is closed (YYYY-MM-DD). */
  closedDays: ReadonlySet<string>;
}

export interface Slot {
  start: number;
  end: number;
  vet_id: string;
  room_id: string | null;
}

/**
 * Busy time as disjoint spans in order (overlapping or touching spans joined: the same instants),
 * so that whether [start, end) meets any of it is one binary search instead of a scan.
 */
export function busyIndex(busy: readonly InstantRange[]): InstantRange[] {
  const sorted = busy.filter((b) => b.end > b.start).sort((a, b) => a.start - b.start);
  const merged: InstantRange[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) last.end = Math.max(last.end, span.end);
    else merged.push({ start: span.start, end: span.end });
  }
  return merged;
}

/** Whether [start, end) meets a span of a busyIndex: the first span ending after start decides. */
function overlaps(index: readonly InstantRange[], start: number, end: number): boolean {
  let low = 0;
  let high = index.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (index[middle]!.end <= start) low = middle + 1;
    else high = middle;
  }
  return low < index.length && index[low]!.start < end;
}

/**
 * The free slots: inside a vet's working hours (in the clinic's time zone, exact across offset
 * changes: a slot is a real span of `duration_minutes`, never at a local time that does not
 * exist), outside closed days, time off and the time held by live visits with their buffers and
 * the new visit's buffers, after the minimum notice and within the maximum advance, with a free
 * room when the type needs one (the first free room, in the order given). Ordered by start, then vet.
 */
export function freeSlots(query: SlotQuery): Slot[] {
  const { rules } = query;
  const length = rules.duration_minutes * MINUTE;
  const step = query.stepMinutes * MINUTE;
  const before = rules.buffer_before_minutes * MINUTE;
  const after = rules.buffer_after_minutes * MINUTE;
  const earliest = query.now + rules.min_notice_minutes * MINUTE;
  const latest = query.now + rules.max_advance_days * DAY;
  const offsetAt = offsetReader(query.timeZone);
  const vets = query.vets.map((vet) => ({ id: vet.id, busy: busyIndex(vet.busy), intervals: vet.intervals.map((i) => ({ weekday: i.weekday, start: minutesOfDay(i.start) ?? 0, end: minutesOfDay(i.end) ?? 0 })) }));
  const rooms = query.rooms.map((room) => ({ id: room.id, busy: busyIndex(room.busy) }));
  const slots: Slot[] = [];
  for (let date = query.from; date <= query.to; date = addDays(date, 1)) {
    if (query.closedDays.has(date)) continue;
    const day = zoneDay(date, query.timeZone, offsetAt);
    const weekday = isoWeekday(date);
    for (const vet of vets) {
      for (const interval of vet.intervals) {
        if (interval.weekday !== weekday) continue;
        for (const range of localTimeRanges(day, interval.start, interval.end)) {
          for (let start = range.start; start + length <= range.end; start += step) {
            if (start < earliest || start > latest) continue;
            const holdStart = start - before;
            const holdEnd = start + length + after;
            if (overlaps(vet.busy, holdStart, holdEnd)) continue;
            let roomId: string | null = null;
            if (rules.room_required) {
              const room = rooms.find((r) => !overlaps(r.busy, holdStart, holdEnd));
              if (!room) continue;
              roomId = room.id;
            }
            slots.push({ start, end: start + length, vet_id: vet.id, room_id: roomId });
          }
        }
      }
    }
  }
  return slots.sort((a, b) => a.start - b.start || (a.vet_id < b.vet_id ? -1 : a.vet_id > b.vet_id ? 1 : 0));
}
