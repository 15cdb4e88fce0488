/**
 * Many clinics on one database, generated in SQL (INSERT … SELECT over generate_series, a batch
 * of clinics per statement), for the scale benchmark and the plan test. Each clinic gets its
 * shape's tutors, patients and visits over three years up to `NOW`, an invoice and a payment for
 * four visits in five, a vaccination per patient (its next due date open when recent, closed
 * mostly otherwise), a signed note for a third of the visits seen, one audit event per visit (one action in a thousand rare) and, for generated
 * clinics, three users. About 1 % of tutors and patients and 2 % of visits are soft-deleted.
 * Names are Chilean, so a search such as "mart" matches about one tutor in seven, in every clinic.
 * Ids are time-ordered UUIDs derived from a table tag and a row number; no audit events are
 * written by the trigger (each batch runs as a bulk load); nothing is analyzed here.
 */
import type { Database } from "../../src/db/client";

/** The instant the data leads up to: give the app a clock at this moment. */
export const NOW = "2026-06-01T12:00:00Z";
const START = "2023-06-01T12:00:00Z";

export interface ClinicShape {
  tutors: number;
  patients: number;
  visits: number;
}
/** An ordinary clinic, and the big one, as the benchmark's default run generates them. */
export const ORDINARY: ClinicShape = { tutors: 300, patients: 400, visits: 3_000 };
export const BIG: ClinicShape = { tutors: 10_000, patients: 13_000, visits: 100_000 };

/** A clinic to fill: an existing one (registered through the API) or a generated one (`create`). */
export interface ClinicToFill {
  id: string;
  shape: ClinicShape;
  /** Generated clinics get a clinics row and three users; registered ones have theirs. */
  create?: boolean;
}

const TAG = { clinics: 0, users: 1, tutors: 2, patients: 3, visits: 4, invoices: 5, payments: 6, vaccinations: 7, events: 8, clinical_notes: 9 } as const;
type Tagged = keyof typeof TAG;
/** A time-ordered (UUIDv7-shaped) id for row `n` of a table, as an SQL expression. */
const idSql = (table: Tagged, n: string) =>
  `(lpad(to_hex(1700000000000::bigint + (${n})), 12, '0') || '7' || '${TAG[table].toString(16).padStart(3, "0")}' || '8' || lpad(to_hex(${n}), 15, '0'))::uuid`;
/** The same id, computed here. */
export const idOf = (table: Tagged, n: number) =>
  `${(1700000000000 + n).toString(16).padStart(12, "0")}7${TAG[table].toString(16).padStart(3, "0")}8${n.toString(16).padStart(15, "0")}`.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5");
/** The id of the n-th generated clinic (from 1). */
export const generatedClinicId = (n: number) => idOf("clinics", n);

const FIRST = ["Martina", "Martín", "Sofía", "Benjamín", "Isidora", "Vicente", "Florencia", "Agustín", "Josefa", "Tomás", "Antonella", "Matías", "Emilia", "Joaquín", "Catalina", "Lucas", "Javiera", "Diego", "Valentina", "Felipe"];
const LAST = ["González", "Muñoz", "Rojas", "Díaz", "Pérez", "Soto", "Contreras", "Silva", "Martínez", "Sepúlveda", "Morales", "Rodríguez", "López", "Fuentes", "Hernández", "Torres", "Araya", "Flores", "Espinoza", "Valenzuela"];
const PETS = ["Rex", "Luna", "Max", "Kira", "Toby", "Nala", "Simba", "Coco", "Bruno", "Lola", "Mora", "Chester", "Pelusa", "Manchas", "Canela", "Tom", "Mia", "Rocky", "Martita", "Oso"];
const array = (values: string[]) => `ARRAY[${values.map((v) => `'${v}'`).join(", ")}]`;

/** `g` of `count` spread evenly from START to NOW. */
const spread = (g: string, count: string) => `(timestamptz '${START}' + ((${g}) - 1)::float8 / greatest(${count}, 1) * (timestamptz '${NOW}' - timestamptz '${START}'))`;

/** One statement per table; each reads the batch of clinics `fill.n BETWEEN $1 AND $2`. */
const STATEMENTS: { table: string; rows: (shape: ClinicShape & { create: boolean }) => number; sql: string }[] = [
  {
    table: "clinics",
    rows: (s) => (s.create ? 1 : 0),
    sql: `INSERT INTO clinics (id, name, created_at, updated_at)
      SELECT f.clinic_id, 'Clínica ' || f.n, timestamptz '${START}', timestamptz '${START}' FROM bench_fill f WHERE f.create AND f.n BETWEEN $1 AND $2`,
  },
  {
    table: "users",
    rows: (s) => (s.create ? 3 : 0),
    sql: `INSERT INTO users (id, clinic_id, email, name, role, password_hash, created_at, updated_at)
      SELECT ${idSql("users", "f.n * 3 + k")}, f.clinic_id, 'user' || (f.n * 3 + k) || '@scale.test', 'Usuario ' || k, (ARRAY['owner', 'vet', 'staff'])[1 + k], 'not a password hash',
             timestamptz '${START}', timestamptz '${START}'
      FROM bench_fill f, generate_series(0, 2) k WHERE f.create AND f.n BETWEEN $1 AND $2`,
  },
  {
    table: "tutors",
    rows: (s) => s.tutors,
    sql: `INSERT INTO tutors (id, clinic_id, name, phone, created_at, updated_at, deleted_at)
      SELECT ${idSql("tutors", "f.t0 + g")}, f.clinic_id, (${array(FIRST)})[1 + (f.t0 + g) % ${FIRST.length}] || ' ' || (${array(LAST)})[1 + ((f.t0 + g) * 7 / ${FIRST.length}) % ${LAST.length}],
             '+569' || lpad(((f.t0 + g) % 100000000)::text, 8, '0'), ${spread("g", "f.tutors")}, ${spread("g", "f.tutors")},
             CASE WHEN g % 100 = 0 THEN ${spread("g", "f.tutors")} + interval '1 day' END
      FROM bench_fill f, generate_series(1, f.tutors::bigint) g WHERE f.n BETWEEN $1 AND $2`,
  },
  {
    table: "patients",
    rows: (s) => s.patients,
    sql: `INSERT INTO patients (id, clinic_id, tutor_id, name, species, sex, weight_grams, created_at, updated_at, deleted_at)
      SELECT ${idSql("patients", "f.p0 + g")}, f.clinic_id, ${idSql("tutors", "f.t0 + 1 + (g * 7919) % f.tutors")}, (${array(PETS)})[1 + (f.p0 + g) % ${PETS.length}],
             (ARRAY['dog', 'dog', 'cat', 'cat', 'bird', 'rabbit', 'other'])[1 + g % 7], (ARRAY['male', 'female'])[1 + g % 2], 1000 + g % 30000,
             ${spread("g", "f.patients")}, ${spread("g", "f.patients")}, CASE WHEN g % 100 = 0 THEN ${spread("g", "f.patients")} + interval '1 day' END
      FROM bench_fill f, generate_series(1, f.patients::bigint) g WHERE f.n BETWEEN $1 AND $2`,
  },
  {
    // Booked up to a month ahead of when they are scheduled; the last 2 % are still to come.
    table: "visits",
    rows: (s) => s.visits,
    sql: `INSERT INTO visits (id, clinic_id, patient_id, status, scheduled_at, completed_at, reason, created_at, updated_at, deleted_at)
      SELECT ${idSql("visits", "f.v0 + g")}, f.clinic_id, ${idSql("patients", "f.p0 + 1 + (g * 104729) % f.patients")}, v.status, v.at,
             CASE WHEN v.status = 'completed' THEN v.at + interval '30 minutes' END, (ARRAY['Control', 'Vacuna', 'Otitis', 'Cojera', 'Desparasitación'])[1 + g % 5],
             v.at - (g * 37 % 30) * interval '1 day', CASE WHEN v.status = 'scheduled' THEN v.at - (g * 37 % 30) * interval '1 day' ELSE v.at + interval '1 hour' END,
             CASE WHEN g % 50 = 0 THEN v.at + interval '1 hour' END
      FROM bench_fill f, generate_series(1, f.visits::bigint) g,
           LATERAL (SELECT ${spread("g", "f.visits")} AS at,
                           CASE WHEN g > f.visits * 0.98 THEN 'scheduled' ELSE (ARRAY['completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'completed', 'cancelled', 'no_show', 'completed'])[1 + g % 10] END AS status) v
      WHERE f.n BETWEEN $1 AND $2`,
  },
  {
    // Four visits in five are invoiced, to the patient's tutor: paid once seen, a draft before.
    table: "invoices",
    rows: (s) => Math.floor(s.visits * 0.8),
    sql: `INSERT INTO invoices (id, clinic_id, tutor_id, visit_id, status, currency, net_amount, tax_amount, total_amount, paid_amount, emitted_at, paid_at, created_at, updated_at)
      SELECT ${idSql("invoices", "f.v0 + g")}, f.clinic_id, ${idSql("tutors", "f.t0 + 1 + ((1 + (g * 104729) % f.patients) * 7919) % f.tutors")}, ${idSql("visits", "f.v0 + g")},
             CASE WHEN v.future THEN 'draft' ELSE 'paid' END, 'CLP', v.net, v.tax, v.net + v.tax, CASE WHEN v.future THEN 0 ELSE v.net + v.tax END,
             CASE WHEN NOT v.future THEN v.at END, CASE WHEN NOT v.future THEN v.at + interval '1 day' END, v.at, CASE WHEN v.future THEN v.at ELSE v.at + interval '1 day' END
      FROM bench_fill f, generate_series(1, f.visits::bigint) g,
           LATERAL (SELECT ${spread("g", "f.visits")} + interval '1 hour' AS at, g > f.visits * 0.98 AS future, 10000 + (g % 50) * 1000 AS net, ((10000 + (g % 50) * 1000) * 1900 + 5000) / 10000 AS tax) v
      WHERE g % 5 <> 0 AND f.n BETWEEN $1 AND $2`,
  },
  {
    table: "payments",
    rows: (s) => Math.floor(s.visits * 0.8 * 0.98),
    sql: `INSERT INTO payments (id, clinic_id, invoice_id, amount, currency, method, paid_at, created_at, updated_at)
      SELECT ${idSql("payments", "f.v0 + g")}, f.clinic_id, ${idSql("invoices", "f.v0 + g")}, v.total, 'CLP', (ARRAY['cash', 'card', 'card', 'transfer'])[1 + g % 4], v.at, v.at, v.at
      FROM bench_fill f, generate_series(1, f.visits::bigint) g,
           LATERAL (SELECT ${spread("g", "f.visits")} + interval '1 day 1 hour' AS at, 10000 + (g % 50) * 1000 + ((10000 + (g % 50) * 1000) * 1900 + 5000) / 10000 AS total) v
      WHERE g % 5 <> 0 AND g <= f.visits * 0.98 AND f.n BETWEEN $1 AND $2`,
  },
  {
    // A yearly booster per patient: due dates from a year after the first patients came; most of
    // those more than three months past were closed by the next dose.
    table: "vaccinations",
    rows: (s) => s.patients,
    sql: `INSERT INTO vaccinations (id, clinic_id, patient_id, vaccine, diseases, given_at, next_due_on, due_closed_at, reminder_status, created_at, updated_at)
      SELECT ${idSql("vaccinations", "f.p0 + g")}, f.clinic_id, ${idSql("patients", "f.p0 + g")}, 'Antirrábica', '{rabies}', v.at, (v.at + interval '1 year')::date,
             CASE WHEN v.at + interval '1 year' < timestamptz '${NOW}' - interval '3 months' AND g % 10 <> 0 THEN v.at + interval '1 year' END, 'pending', v.at, v.at
      FROM bench_fill f, generate_series(1, f.patients::bigint) g, LATERAL (SELECT ${spread("g", "f.patients")} AS at) v
      WHERE f.n BETWEEN $1 AND $2`,
  },
  {
    // A signed note for a third of the visits seen.
    table: "clinical_notes",
    rows: (s) => Math.floor((s.visits * 0.98) / 3),
    sql: `INSERT INTO clinical_notes (id, clinic_id, visit_id, patient_id, author_id, assessment, signed_at, signed_by, created_at, updated_at)
      SELECT ${idSql("clinical_notes", "f.v0 + g")}, f.clinic_id, ${idSql("visits", "f.v0 + g")}, ${idSql("patients", "f.p0 + 1 + (g * 104729) % f.patients")}, ${idSql("users", "f.n * 3 + 1")},
             'Sin hallazgos', v.at, ${idSql("users", "f.n * 3 + 1")}, v.at, v.at
      FROM bench_fill f, generate_series(1, f.visits::bigint) g, LATERAL (SELECT ${spread("g", "f.visits")} + interval '45 minutes' AS at) v
      WHERE g % 3 = 0 AND g <= f.visits * 0.98 AND f.n BETWEEN $1 AND $2`,
  },
  {
    // The audit log: one event per visit; one action in a thousand is rare (an invoice voided).
    table: "events",
    rows: (s) => s.visits,
    sql: `INSERT INTO events (id, clinic_id, occurred_at, actor_type, actor_name, action, entity_type, entity_id, changes)
      SELECT ${idSql("events", "f.v0 + g")}, f.clinic_id, ${spread("g", "f.visits")}, 'user', 'Bench', a.action, split_part(a.action, '.', 1), ${idSql("visits", "f.v0 + g")}, '{}'::jsonb
      FROM bench_fill f, generate_series(1, f.visits::bigint) g,
           LATERAL (SELECT CASE WHEN g % 1000 = 0 THEN 'invoice.voided' WHEN g % 10 < 5 THEN 'visit.created' WHEN g % 10 < 8 THEN 'visit.updated' ELSE 'invoice.emitted' END AS action) a
      WHERE f.n BETWEEN $1 AND $2`,
  },
];

export interface FillProgress {
  table: string;
  rows: number;
  totalRows: number;
  seconds: number;
}

/**
 * Fills `clinics` (in order) in batches of about `batchRows` visits; `progress` hears each
 * statement. Row numbers continue after `startRow` per table, so a second call on the same
 * database passes the previous call's return value.
 */
export async function fillClinics(
  database: Database,
  clinics: ClinicToFill[],
  options: { batchRows?: number; progress?: (p: FillProgress) => void; startRow?: number; rebuildIndexes?: boolean } = {},
): Promise<number> {
  const batchRows = options.batchRows ?? 200_000;
  // A bulk load is faster into bare tables, its indexes built once afterwards (sorted, not one
  // row at a time): the same definitions, read from the catalogue, primary keys and the indexes
  // of constraints (the calendar's exclusion constraints) kept.
  const filled = [...new Set(STATEMENTS.map((statement) => statement.table))];
  const rebuilt = options.rebuildIndexes
    ? await database.query<{ name: string; definition: string }>(
        `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
         WHERE t.relnamespace = 'public'::regnamespace AND t.relname = ANY($1::text[]) AND NOT x.indisprimary AND NOT x.indisunique
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`,
        [filled],
      )
    : [];
  for (const index of rebuilt) await database.query(`DROP INDEX public."${index.name}"`);
  await database.query(`CREATE TABLE IF NOT EXISTS bench_fill (n int PRIMARY KEY, clinic_id uuid NOT NULL, "create" boolean NOT NULL, tutors int NOT NULL, patients int NOT NULL, visits int NOT NULL, t0 bigint NOT NULL, p0 bigint NOT NULL, v0 bigint NOT NULL)`);
  await database.query("TRUNCATE bench_fill");
  // Row-number bases: each table's rows of clinic n follow those of clinic n - 1.
  let base = options.startRow ?? 0;
  const rows = clinics.map((clinic, index) => {
    const row = { n: index + 1, clinic_id: clinic.id, create: clinic.create === true, ...clinic.shape, t0: base, p0: base, v0: base };
    base += Math.max(clinic.shape.tutors, clinic.shape.patients, clinic.shape.visits);
    return row;
  });
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    await database.query(
      `INSERT INTO bench_fill SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(n int, clinic_id uuid, "create" boolean, tutors int, patients int, visits int, t0 bigint, p0 bigint, v0 bigint)`,
      [JSON.stringify(chunk)],
    );
  }
  // Batches of whole clinics, about batchRows visits each.
  const batches: [number, number][] = [];
  for (let first = 1; first <= rows.length; ) {
    let last = first;
    let visits = rows[first - 1]!.visits;
    while (last < rows.length && visits + rows[last]!.visits <= batchRows) visits += rows[last++]!.visits;
    batches.push([first, last]);
    first = last + 1;
  }
  for (const statement of STATEMENTS) {
    const totalRows = rows.reduce((sum, row) => sum + statement.rows(row), 0);
    let done = 0;
    for (const [first, last] of batches) {
      const started = performance.now();
      await database.copyTransaction("load", async (session) => {
        await session.query("SET LOCAL synchronous_commit = off");
        await session.query(statement.sql, [first, last]);
      });
      done += rows.slice(first - 1, last).reduce((sum, row) => sum + statement.rows(row), 0);
      options.progress?.({ table: statement.table, rows: done, totalRows, seconds: (performance.now() - started) / 1000 });
    }
  }
  await database.query("DROP TABLE bench_fill");
  for (const [n, index] of rebuilt.entries()) {
    const started = performance.now();
    await database.copyTransaction("load", async (session) => {
      await session.query("SET LOCAL maintenance_work_mem = '256MB'");
      await session.query(index.definition);
    });
    options.progress?.({ table: `index ${index.name}`, rows: n + 1, totalRows: rebuilt.length, seconds: (performance.now() - started) / 1000 });
  }
  return base;
}
