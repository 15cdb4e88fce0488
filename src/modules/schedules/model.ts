import { t } from "elysia";
import { DateOnly, NullableString, OptionalNullable, StrictInteger, Timestamp, Uuid } from "../../http/common-model";
import { cursorQueryFields, CursorPage, updatedSinceQueryField, withDeletedAt } from "../../http/pagination";

const TimeOfDay = t.String({ pattern: "^[0-9]{2}:[0-9]{2}$", description: "HH:MM in the clinic's local time (24:00 ends a day)", examples: ["09:00"] });
export const WeeklyIntervalModel = t.Object({ weekday: StrictInteger({ minimum: 1, maximum: 7, description: "ISO weekday: 1 Monday … 7 Sunday" }), start: TimeOfDay, end: TimeOfDay });
export const WeeklyIntervals = t.Array(WeeklyIntervalModel, { maxItems: 70 });

export const WorkingHoursBody = t.Object({ intervals: WeeklyIntervals });
export const WorkingHoursModel = t.Object({
  user_id: Uuid,
  intervals: WeeklyIntervals,
  source: t.Union([t.Literal("own"), t.Literal("clinic_opening_hours")], { description: "The vet's own hours, or the clinic's opening hours when the vet has none" }),
});

export const UserParams = t.Object({ id: Uuid });
export const UserItemParams = t.Object({ id: Uuid, itemId: Uuid });
export const ItemParams = t.Object({ id: Uuid });

export const TimeOffModel = t.Object({ id: Uuid, clinic_id: Uuid, user_id: Uuid, starts_at: Timestamp, ends_at: Timestamp, reason: NullableString(), created_at: Timestamp, updated_at: Timestamp });
export const CreateTimeOffBody = t.Object({
  starts_at: Timestamp,
  ends_at: Timestamp,
  reason: OptionalNullable(t.String({ maxLength: 500 })),
});
export const ClosureModel = t.Object({ id: Uuid, clinic_id: Uuid, day: DateOnly, reason: NullableString(), created_at: Timestamp, updated_at: Timestamp });
export const CreateClosureBody = t.Object({ day: DateOnly, reason: OptionalNullable(t.String({ maxLength: 500, examples: ["Fiestas Patrias"] })) });

export const ListQuery = t.Object({ ...cursorQueryFields, ...updatedSinceQueryField });
export const TimeOffPage = CursorPage(withDeletedAt(TimeOffModel));
export const ClosurePage = CursorPage(withDeletedAt(ClosureModel));

export const CalendarSettingsModel = t.Object({
  slug: t.Union([t.String(), t.Null()], { description: "Public booking address /book/{slug}; null = online booking off" }),
  opening_hours: WeeklyIntervals,
  auto_confirm_online_bookings: t.Boolean(),
  cancellation_window_minutes: t.Integer({ description: "A tutor may cancel or move a booking until this long before its start" }),
  slot_step_minutes: t.Union([t.Integer(), t.Null()], { description: "Minutes between slot starts; null = the type's duration" }),
  show_vet_names_online: t.Boolean(),
  updated_at: t.Union([Timestamp, t.Null()]),
});
export const UpdateCalendarSettingsBody = t.Object(
  {
    slug: OptionalNullable(t.String({ pattern: "^[a-z0-9](?:[a-z0-9-]{1,48}[a-z0-9])$", examples: ["clinica-los-aromos"], description: "3–50 lower-case letters, digits and dashes" })),
    opening_hours: t.Optional(WeeklyIntervals),
    auto_confirm_online_bookings: t.Optional(t.Boolean()),
    cancellation_window_minutes: t.Optional(StrictInteger({ minimum: 0, maximum: 60 * 24 * 30 })),
    slot_step_minutes: OptionalNullable(StrictInteger({ minimum: 5, maximum: 240 })),
    show_vet_names_online: t.Optional(t.Boolean()),
  },
  { minProperties: 1 },
);
