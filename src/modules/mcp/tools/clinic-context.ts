import { exactInteger } from "../../../lib/money";
import { t } from "elysia";
import { MINUTE } from "../../../lib/clock";
import { addDays, dayInZone, rfc3339, startOfDayInZone } from "../../../lib/time";
import type { ToolContext, ToolDefinition } from "../registry";

export const CLINIC_CONTEXT_TTL_MS = 5 * MINUTE;

const ClinicContext = t.Object({
  clinic_id: t.String(),
  revenue_today: t.Integer({ description: "Payments today minus refunds today, smallest currency unit" }),
  visits_today: t.Integer({ description: "Visits scheduled today, not cancelled" }),
  avg_ticket: t.Integer({ description: "Mean total of invoices emitted today (rounded; 0 if none)" }),
  new_tutors_today: t.Integer(),
  active_alerts: t.Integer(),
  currency: t.String(),
  timezone: t.String({ description: "The clinic's IANA time zone: \"today\" is this zone's calendar day" }),
  as_of: t.String({ format: "date-time" }),
});

export type ClinicContextResult = typeof ClinicContext.static;

/** One round trip computes every figure; "today" is the clinic's calendar day. */
const FIGURES_SQL = `
select
  (select coalesce(sum(amount), 0) from payments where clinic_id = $1 and deleted_at is null and paid_at >= $2 and paid_at < $3)
  - (select coalesce(sum(amount), 0) from refunds where clinic_id = $1 and deleted_at is null and refunded_at >= $2 and refunded_at < $3)
    as revenue_today,
  (select count(*) from visits where clinic_id = $1 and deleted_at is null and status <> 'cancelled' and scheduled_at >= $2 and scheduled_at < $3)
    as visits_today,
  (select coalesce(round(avg(total_amount)), 0) from invoices where clinic_id = $1 and deleted_at is null and status not in ('void', 'credited') and emitted_at >= $2 and emitted_at < $3)
    as avg_ticket,
  (select count(*) from tutors where clinic_id = $1 and deleted_at is null and created_at >= $2 and created_at < $3)
    as new_tutors_today,
  (select count(*) from alerts where clinic_id = $1 and deleted_at is null and status = 'active')
    as active_alerts`;

export async function computeClinicContext({ database, clock, key }: ToolContext): Promise<ClinicContextResult> {
  const now = clock.now();
  const today = dayInZone(now, key.clinicTimezone);
  const from = startOfDayInZone(today, key.clinicTimezone);
  const to = startOfDayInZone(addDays(today, 1), key.clinicTimezone);
  const [row] = await database.query<Record<string, string | number>>(FIGURES_SQL, [key.clinicId, from.toISOString(), to.toISOString()]);
  return {
    clinic_id: key.clinicId,
    revenue_today: exactInteger(row!.revenue_today!),
    visits_today: exactInteger(row!.visits_today!),
    avg_ticket: exactInteger(row!.avg_ticket!),
    new_tutors_today: exactInteger(row!.new_tutors_today!),
    active_alerts: exactInteger(row!.active_alerts!),
    currency: key.clinicCurrency,
    timezone: key.clinicTimezone,
    as_of: rfc3339(now),
  };
}

/** The figures change slowly (spec: "roughly every 5 minutes"), so each clinic's are cached that long. */
export function clinicContextTool(): ToolDefinition {
  const cache = new Map<string, { value: ClinicContextResult; expiresAt: number }>();
  return {
    name: "get_clinic_context",
    title: "Clinic context",
    description:
      "Today's figures for the clinic: revenue (payments minus refunds), visits, average ticket, new tutors and active alerts. Money in the smallest currency unit. Refreshed at most every 5 minutes.",
    scope: "clinic_context",
    inputSchema: t.Object({}, { additionalProperties: false }),
    outputSchema: ClinicContext,
    async run(context) {
      const now = context.clock.now().getTime();
      const cached = cache.get(context.key.clinicId);
      if (cached && cached.expiresAt > now) return { result: cached.value };
      const value = await computeClinicContext(context);
      cache.set(context.key.clinicId, { value, expiresAt: now + CLINIC_CONTEXT_TTL_MS });
      return { result: value };
    },
  };
}
