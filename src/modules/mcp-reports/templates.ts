import type { ReportTemplate } from "./model";

/** A SQL string literal (doubling quotes), for the clinic's time zone name. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The starter set: questions every clinic asks, written once with the clinic's definitions
 * (revenue is payments minus refunds; a ticket is an emitted or paid invoice; days are the
 * clinic's days in its time zone). Offered at GET /mcp/reports/templates and saved by the demo.
 */
export function reportTemplates(timezone: string): ReportTemplate[] {
  const tz = literal(timezone);
  const day = (column: string) => `(${column} AT TIME ZONE ${tz})::date`;
  const today = `coalesce(:as_of, ${day("now()")})`;
  const asOf = { name: "as_of", type: "date" as const, description: "The day to count from (default: today in the clinic's time zone)", required: false };
  const from = (required: boolean) => ({ name: "from", type: "date" as const, description: "First day, inclusive (clinic time zone)", required });
  const to = (required: boolean) => ({ name: "to", type: "date" as const, description: "Last day, inclusive (clinic time zone)", required });
  return [
    {
      name: "daily_revenue",
      title: "Daily revenue",
      description: "Revenue per day between two dates: payments received minus refunds given, in the smallest currency unit. Days without movements are left out.",
      sql: `SELECT day, CAST(sum(amount) AS bigint) AS revenue
FROM (
  SELECT ${day("paid_at")} AS day, amount FROM payments
  UNION ALL
  SELECT ${day("refunded_at")} AS day, -amount FROM refunds
) AS movements
WHERE day BETWEEN :from AND :to
GROUP BY day
ORDER BY day`,
      parameters: [from(true), to(true)],
      scope: "read",
    },
    {
      name: "median_ticket_by_species",
      title: "Median ticket by species",
      description: "The median invoice total (tax included, halves rounded up) per species of the visit's patient, over emitted and paid invoices, optionally between two dates of emission.",
      sql: `SELECT p.species, CAST(count(*) AS integer) AS invoices,
  CAST(round(CAST(percentile_cont(0.5) WITHIN GROUP (ORDER BY i.total_amount) AS numeric)) AS bigint) AS median_ticket
FROM invoices i
JOIN visits v ON v.id = i.visit_id
JOIN patients p ON p.id = v.patient_id
WHERE i.status IN ('emitted', 'paid')
  AND (:from IS NULL OR ${day("i.emitted_at")} >= :from)
  AND (:to IS NULL OR ${day("i.emitted_at")} <= :to)
GROUP BY p.species
ORDER BY p.species`,
      parameters: [from(false), to(false)],
      scope: "read",
    },
    {
      name: "overdue_invoices",
      title: "Overdue invoices",
      description: "Emitted invoices with a balance left, emitted at least `days` days ago, oldest first, with the tutor to call.",
      sql: `SELECT i.id AS invoice_id, t.name AS tutor, t.phone, ${day("i.emitted_at")} AS emitted_on,
  i.total_amount, i.total_amount - i.paid_amount AS balance,
  ${today} - ${day("i.emitted_at")} AS days_outstanding
FROM invoices i
JOIN tutors t ON t.id = i.tutor_id
WHERE i.status = 'emitted' AND i.paid_amount < i.total_amount
  AND ${day("i.emitted_at")} <= ${today} - :days
ORDER BY i.emitted_at, i.id`,
      parameters: [{ name: "days", type: "integer", description: "At least this many days since emission", required: false, default: 30, min: 0, max: 3650 }, asOf],
      scope: "read",
    },
    {
      name: "vaccines_due",
      title: "Vaccines due",
      description: "Active vaccine reminders due from today (or as_of) through the next `days` days, with the patient and the tutor to call.",
      sql: `SELECT a.due_date, p.name AS patient, p.species, t.name AS tutor, t.phone, a.message
FROM alerts a
JOIN patients p ON p.id = a.patient_id
JOIN tutors t ON t.id = p.tutor_id
WHERE a.kind = 'vaccine_due' AND a.status = 'active'
  AND a.due_date BETWEEN ${today} AND ${today} + :days
ORDER BY a.due_date, p.name, a.id`,
      parameters: [{ name: "days", type: "integer", description: "How many days ahead", required: false, default: 30, min: 0, max: 365 }, asOf],
      scope: "read",
    },
    {
      name: "no_show_rate_by_vet",
      title: "No-show rate by vet",
      description: "Per vet, the share of visits the patient did not come to, among visits that were due (completed or no-show; cancelled ones are left out), optionally between two dates.",
      sql: `SELECT v.vet_id, CAST(count(*) AS integer) AS visits,
  CAST(count(*) FILTER (WHERE v.status = 'no_show') AS integer) AS no_shows,
  CAST(round(100.0 * count(*) FILTER (WHERE v.status = 'no_show') / count(*), 1) AS double precision) AS no_show_pct
FROM visits v
WHERE v.status IN ('completed', 'no_show')
  AND (:from IS NULL OR ${day("v.scheduled_at")} >= :from)
  AND (:to IS NULL OR ${day("v.scheduled_at")} <= :to)
GROUP BY v.vet_id
ORDER BY no_show_pct DESC, v.vet_id`,
      parameters: [from(false), to(false)],
      scope: "read",
    },
  ];
}
