/**
 * Two clinics at scale for the views benchmark: clinic A (queried) with a few thousand tutors and
 * patients, `visits` visits over three years and an invoice and a payment for every tenth
 * visit; clinic B with a tenth of each, so the clinic filter has rows to skip. About 1 % of
 * tutors and patients, 2 % of visits and 0.5 % of payments are soft-deleted. Set-based
 * (INSERT … SELECT generate_series), in chunks of 100,000 rows; never analyzes.
 */
import type { Database } from "../../src/db/client";

export const CLINIC_A = "01900000-0000-7000-8000-0000000000aa";
export const CLINIC_B = "01900000-0000-7000-8000-0000000000bb";

const TABLE_TAG = { tutors: 1, patients: 2, visits: 3, invoices: 4, payments: 5 } as const;
/** A time-ordered (UUIDv7-shaped) id for row number n of a table, as an SQL expression. */
const idSql = (table: keyof typeof TABLE_TAG, n: string) =>
  `(lpad(to_hex(1700000000000::bigint + (${n})), 12, '0') || '7${TABLE_TAG[table].toString(16).padStart(3, "0")}8' || lpad(to_hex(${n}), 15, '0'))::uuid`;
/** The same id, computed here. */
export const idOf = (table: keyof typeof TABLE_TAG, n: number) =>
  `${(1700000000000 + n).toString(16).padStart(12, "0")}7${TABLE_TAG[table].toString(16).padStart(3, "0")}8${n.toString(16).padStart(15, "0")}`.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
const THREE_YEARS_S = 3 * 365 * 86_400;
const CHUNK = 100_000;

export interface ClinicSizes {
  tutors: number;
  patients: number;
  visits: number;
  invoices: number;
}

/** Clinic A's sizes for a number of visits (clinic B has a tenth of each). */
export function sizesFor(visits: number): ClinicSizes {
  return { tutors: Math.max(50, Math.round(visits / 250)), patients: Math.max(100, Math.round(visits / 125)), visits, invoices: Math.max(10, Math.round(visits / 10)) };
}

export async function seedClinicsAtScale(database: Database, visits: number): Promise<{ A: ClinicSizes; B: ClinicSizes }> {
  const A = sizesFor(visits);
  const B = { tutors: Math.ceil(A.tutors / 10), patients: Math.ceil(A.patients / 10), visits: Math.ceil(A.visits / 10), invoices: Math.ceil(A.invoices / 10) };
  async function insertRows(from: number, to: number, insert: (first: string, last: string) => string) {
    for (let start = from; start <= to; start += CHUNK) await database.query(insert(`${start}`, `${Math.min(start + CHUNK - 1, to)}`));
  }
  let offsets = { tutors: 0, patients: 0, visits: 0, invoices: 0 };
  for (const [clinic, size] of [[CLINIC_A, A], [CLINIC_B, B]] as const) {
    const o = offsets;
    await database.query("INSERT INTO clinics (id, name, created_at, updated_at) VALUES ($1, $2, now(), now())", [clinic, `Bench ${clinic.slice(-2)}`]);
    const at = (n: string, count: number, offset: number) => `timestamptz '2023-01-01 08:00:00Z' + ((${n}) - ${offset}) * ${THREE_YEARS_S / count} * interval '1 second'`;
    await insertRows(o.tutors + 1, o.tutors + size.tutors, (first, last) => `
      INSERT INTO tutors (id, clinic_id, name, phone, created_at, updated_at, deleted_at)
      SELECT ${idSql("tutors", "g")}, '${clinic}', 'Tutor ' || g, '+5691' || lpad(g::text, 7, '0'), ${at("g", size.tutors, o.tutors)}, ${at("g", size.tutors, o.tutors)},
             CASE WHEN g % 100 = 0 THEN timestamptz '2026-01-01Z' END
      FROM generate_series(${first}::bigint, ${last}::bigint) g`);
    await insertRows(o.patients + 1, o.patients + size.patients, (first, last) => `
      INSERT INTO patients (id, clinic_id, tutor_id, name, species, sex, weight_grams, created_at, updated_at, deleted_at)
      SELECT ${idSql("patients", "g")}, '${clinic}', ${idSql("tutors", `${o.tutors} + 1 + (g * 7919) % ${size.tutors}`)}, 'Patient ' || g,
             (ARRAY['dog', 'dog', 'cat', 'cat', 'bird', 'rabbit', 'other'])[1 + g % 7], (ARRAY['male', 'female'])[1 + g % 2], 1000 + g % 30000,
             ${at("g", size.patients, o.patients)}, ${at("g", size.patients, o.patients)}, CASE WHEN g % 100 = 0 THEN timestamptz '2026-01-01Z' END
      FROM generate_series(${first}::bigint, ${last}::bigint) g`);
    // Visits in time order; a patient's visits spread over the three years (a prime stride).
    await insertRows(o.visits + 1, o.visits + size.visits, (first, last) => `
      INSERT INTO visits (id, clinic_id, patient_id, status, scheduled_at, reason, created_at, updated_at, deleted_at)
      SELECT ${idSql("visits", "g")}, '${clinic}', ${idSql("patients", `${o.patients} + 1 + (g * 104729) % ${size.patients}`)},
             (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'cancelled', 'no_show', 'completed'])[1 + g % 10],
             ${at("g", size.visits, o.visits)}, (ARRAY['Control', 'Vacuna', 'Otitis', 'Cojera', 'Desparasitación'])[1 + g % 5],
             ${at("g", size.visits, o.visits)}, ${at("g", size.visits, o.visits)}, CASE WHEN g % 50 = 0 THEN timestamptz '2026-01-01Z' END
      FROM generate_series(${first}::bigint, ${last}::bigint) g`);
    const net = "(10000 + (g % 50) * 1000)";
    const tax = `((${net} * 1900 + 5000) / 10000)`;
    await insertRows(o.invoices + 1, o.invoices + size.invoices, (first, last) => `
      INSERT INTO invoices (id, clinic_id, tutor_id, visit_id, status, currency, net_amount, tax_amount, total_amount, paid_amount, emitted_at, paid_at, created_at, updated_at)
      SELECT ${idSql("invoices", "g")}, '${clinic}', ${idSql("tutors", `${o.tutors} + 1 + (g * 31) % ${size.tutors}`)}, ${idSql("visits", `${o.visits} + (g - ${o.invoices}) * 10`)},
             'paid', 'CLP', ${net}, ${tax}, ${net} + ${tax}, ${net} + ${tax}, ${at("g", size.invoices, o.invoices)}, ${at("g", size.invoices, o.invoices)},
             ${at("g", size.invoices, o.invoices)}, ${at("g", size.invoices, o.invoices)}
      FROM generate_series(${first}::bigint, ${last}::bigint) g`);
    await insertRows(o.invoices + 1, o.invoices + size.invoices, (first, last) => `
      INSERT INTO payments (id, clinic_id, invoice_id, amount, currency, method, paid_at, created_at, updated_at, deleted_at)
      SELECT ${idSql("payments", "g")}, '${clinic}', ${idSql("invoices", "g")}, ${net} + ${tax}, 'CLP', (ARRAY['cash', 'card', 'card', 'transfer'])[1 + g % 4],
             ${at("g", size.invoices, o.invoices)}, ${at("g", size.invoices, o.invoices)}, ${at("g", size.invoices, o.invoices)}, CASE WHEN g % 200 = 0 THEN timestamptz '2026-01-01Z' END
      FROM generate_series(${first}::bigint, ${last}::bigint) g`);
    offsets = { tutors: o.tutors + size.tutors, patients: o.patients + size.patients, visits: o.visits + size.visits, invoices: o.invoices + size.invoices };
  }
  return { A, B };
}
