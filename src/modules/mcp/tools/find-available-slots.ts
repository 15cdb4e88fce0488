import { t } from "elysia";
import { AvailabilityModel } from "../../availability/model";
import { availabilityForType, slotView } from "../../availability/service";
import type { ToolDefinition } from "../registry";

/** The free slots for an appointment type, by the same computation as GET /availability: assistants look, they do not book. */
export function findAvailableSlotsTool(): ToolDefinition {
  return {
    name: "find_available_slots",
    title: "Find available slots",
    description:
      "Free appointment slots for an appointment type between two days (YYYY-MM-DD, inclusive, the clinic's time zone; at most 31 days), optionally for one vet. Times are UTC; `timezone` is the clinic's zone. Read only: booking is done by the clinic.",
    scope: "read",
    inputSchema: t.Object(
      {
        appointment_type_id: t.String({ format: "uuid" }),
        from: t.String({ format: "date" }),
        to: t.String({ format: "date" }),
        vet_id: t.Optional(t.String({ format: "uuid" })),
      },
      { additionalProperties: false },
    ),
    outputSchema: AvailabilityModel,
    async run({ database, clock, key }, input: { appointment_type_id: string; from: string; to: string; vet_id?: string }) {
      const { slots, timezone } = await availabilityForType({ db: database.db, clock }, key.clinicId, input.appointment_type_id, { from: input.from, to: input.to, ...(input.vet_id ? { vetId: input.vet_id } : {}) });
      return { result: { data: slots.map(slotView), timezone }, rowsReturned: slots.length };
    },
  };
}
