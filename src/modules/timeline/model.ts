import { t } from "elysia";
import { Timestamp, Uuid, ValueList } from "../../http/common-model";
import { cursorQueryFields } from "../../http/pagination";
import { TIMELINE_KINDS } from "../../db/schema";

export const TimelineItemModel = t.Object({
  kind: t.String({ description: `What the entry is (${TIMELINE_KINDS.join(", ")}); the record has that resource's shape` }),
  id: Uuid,
  at: Timestamp,
  summary: t.String({ description: "One line for a person to read" }),
  record: t.Record(t.String(), t.Unknown(), { description: "The entry as its own route answers it (a visit, a signed note with its addenda, an addendum, vitals, a vaccination, a prescription, an invoice without its items, a reminder message as /reminders lists it: its state, channel, rule kind and when it left)" }),
});

export const TimelineQuery = t.Object({ ...cursorQueryFields, kind: t.Optional(ValueList(TIMELINE_KINDS)) });

export type TimelineFilters = typeof TimelineQuery.static;
/** One entry of a patient's timeline as the API answers it. */
export type TimelineItemView = typeof TimelineItemModel.static;
