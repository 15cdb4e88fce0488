import { t } from "elysia";
import { Nullable, Timestamp, Uuid } from "../../http/common-model";

export const AvailabilityQuery = t.Object({
  appointment_type_id: Uuid,
  from: t.String({ format: "date", description: "First day, inclusive, in the clinic's time zone", examples: ["2026-03-02"] }),
  to: t.String({ format: "date", description: "Last day, inclusive (at most 31 days from `from`)", examples: ["2026-03-08"] }),
  vet_id: t.Optional(Uuid),
});

export const SlotModel = t.Object({ start: Timestamp, end: Timestamp, vet_id: Nullable(Uuid), room_id: Nullable(Uuid) });
export const AvailabilityModel = t.Object({ data: t.Array(SlotModel), timezone: t.String({ description: "The clinic's IANA time zone, for showing the UTC times" }) });

