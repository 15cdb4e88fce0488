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
      description: "Vaccine due dates still open (no later dose for the same disease) through the next `days` days from today (or as_of), overdue ones included and flagged, with the patient, the tutor to call and reception's reminder status.",
      sql: `SELECT v.next_due_on AS due_date, v.next_due_on < ${today} AS overdue, p.name AS patient, p.species, t.name AS tutor, t.phone, v.vaccine, v.reminder_status
FROM vaccinations v
JOIN patients p ON p.id = v.patient_id
JOIN tutors t ON t.id = p.tutor_id
WHERE v.due_closed_at IS NULL AND v.next_due_on IS NOT NULL
  AND v.next_due_on <= ${today} + :days
ORDER BY v.next_due_on, p.name, v.id`,
      parameters: [{ name: "days", type: "integer", description: "How many days ahead", required: false, default: 30, min: 0, max: 365 }, asOf],
      scope: "read",
    },
    {
      name: "weight_trend",
      title: "Weight trend of a patient",
      description: "Every weighing of one patient in order, with the change from the one before, in grams (days in the clinic's time zone).",
      sql: `SELECT ${day("w.measured_at")} AS day, w.weight_grams,
  w.weight_grams - lag(w.weight_grams) OVER (ORDER BY w.measured_at, w.id) AS change_grams
FROM vitals w
WHERE w.patient_id = CAST(:patient_id AS uuid) AND w.weight_grams IS NOT NULL
ORDER BY w.measured_at, w.id`,
      parameters: [{ name: "patient_id", type: "string", description: "The patient's id (patients.id)", required: true }],
      scope: "read",
    },
    {
      name: "patients_without_recent_visit",
      title: "Patients with no visit in 12 months",
      description: "Patients with no completed visit in the last `months` months (12 by default) up to today (or as_of), never-seen ones first, with the tutor to call.",
      sql: `SELECT p.id AS patient_id, p.name AS patient, p.species, t.name AS tutor, t.phone,
  max(${day("v.completed_at")}) AS last_visit_on
FROM patients p
JOIN tutors t ON t.id = p.tutor_id
LEFT JOIN visits v ON v.patient_id = p.id AND v.status = 'completed'
GROUP BY p.id, p.name, p.species, t.name, t.phone
HAVING max(${day("v.completed_at")}) IS NULL OR max(${day("v.completed_at")}) < CAST(${today} - make_interval(months => :months) AS date)
ORDER BY last_visit_on NULLS FIRST, p.name, p.id`,
      parameters: [{ name: "months", type: "integer", description: "Months without a visit", required: false, default: 12, min: 1, max: 120 }, asOf],
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
