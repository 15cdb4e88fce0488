/**
 * The four query classes the MCP benchmarks ask, each the same logical question two ways: the
 * service reads its clinic views (which show only the key's clinic); a peer or PGlite called
 * directly reads the base tables, filtered to the same clinic and its live rows.
 */
export interface QueryClass {
  label: string;
  /** Ours: the clinic views, which show only the key's clinic. */
  ours: string;
  /** The peers: the base tables, filtered to the same clinic and its live rows. */
  peers: (clinicId: string) => string;
}

export const QUERIES: QueryClass[] = [
  { label: "count(*)", ours: "SELECT count(*) AS n FROM visits", peers: (c) => `SELECT count(*) AS n FROM visits WHERE clinic_id = '${c}' AND deleted_at IS NULL` },
  {
    label: "revenue by month",
    ours: "SELECT date_trunc('month', paid_at) AS month, sum(amount) AS revenue FROM payments GROUP BY 1 ORDER BY 1",
    peers: (c) => `SELECT date_trunc('month', paid_at) AS month, sum(amount) AS revenue FROM payments WHERE clinic_id = '${c}' AND deleted_at IS NULL GROUP BY 1 ORDER BY 1`,
  },
  {
    label: "top 10 tutors (join)",
    ours: "SELECT t.name, count(v.id) AS visits FROM tutors t JOIN patients p ON p.tutor_id = t.id JOIN visits v ON v.patient_id = p.id GROUP BY t.id, t.name ORDER BY visits DESC, t.name LIMIT 10",
    peers: (c) =>
      `SELECT t.name, count(v.id) AS visits FROM tutors t JOIN patients p ON p.tutor_id = t.id AND p.clinic_id = '${c}' AND p.deleted_at IS NULL JOIN visits v ON v.patient_id = p.id AND v.clinic_id = '${c}' AND v.deleted_at IS NULL WHERE t.clinic_id = '${c}' AND t.deleted_at IS NULL GROUP BY t.id, t.name ORDER BY visits DESC, t.name LIMIT 10`,
  },
  {
    label: "200-row listing",
    ours: "SELECT id, patient_id, status, scheduled_at, reason FROM visits ORDER BY scheduled_at DESC LIMIT 200",
    peers: (c) => `SELECT id, patient_id, status, scheduled_at, reason FROM visits WHERE clinic_id = '${c}' AND deleted_at IS NULL ORDER BY scheduled_at DESC LIMIT 200`,
  },
];
