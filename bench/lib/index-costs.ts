/**
 * What an index costs: its size, and what it adds to each row written, measured by inserting
 * copies of `rows` of the table's own rows (new ids) in a transaction with every index and in
 * one without that index (dropped inside the transaction), both rolled back, best of three.
 */
import type { Database } from "../../src/db/client";

/** The indexes that keep a clinic's everyday queries inside its clinic (drizzle/*_clinic_first_indexes.sql). */
export const CLINIC_FIRST_INDEXES = [
  "visits_clinic_updated_idx",
  "invoices_clinic_updated_idx",
  "invoices_clinic_visit_idx",
  "payments_clinic_updated_idx",
  "tutors_clinic_updated_idx",
  "patients_clinic_updated_idx",
  "tutors_clinic_name_trgm_idx",
  "patients_clinic_name_trgm_idx",
  "events_clinic_action_idx",
];

export interface IndexCost {
  index: string;
  table: string;
  size: string;
  /** Microseconds per row written with every index, and the part this index adds. */
  insertMicros: number;
  indexMicros: number;
}

class RolledBack extends Error {}

async function timedInsert(database: Database, table: string, columns: string[], rows: number, without?: string): Promise<number> {
  let micros = 0;
  const copied = columns.map((c) => (c === "id" ? "gen_random_uuid()" : `"${c}"`)).join(", ");
  await database
    .copyTransaction("load", async (session) => {
      if (without) await session.query(`DROP INDEX public."${without}"`);
      const started = performance.now();
      await session.query(`INSERT INTO public."${table}" (${columns.map((c) => `"${c}"`).join(", ")}) SELECT ${copied} FROM public."${table}" ORDER BY id DESC LIMIT ${rows}`);
      micros = ((performance.now() - started) * 1000) / rows;
      throw new RolledBack();
    })
    .catch((error) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return micros;
}

export async function indexCosts(database: Database, indexes: string[], rows = 5_000): Promise<IndexCost[]> {
  const costs: IndexCost[] = [];
  for (const index of indexes) {
    const [info] = await database.query<{ table: string; size: string }>(
      "SELECT t.relname AS table, pg_size_pretty(pg_relation_size(i.oid)) AS size FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid WHERE i.relname = $1",
      [index],
    );
    if (!info) continue;
    const columns = (
      await database.query<{ name: string }>(
        "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND is_generated = 'NEVER' AND identity_generation IS NULL ORDER BY ordinal_position",
        [info.table],
      )
    ).map((c) => c.name);
    let withIt = Infinity;
    let withoutIt = Infinity;
    for (let i = 0; i < 3; i++) {
      withIt = Math.min(withIt, await timedInsert(database, info.table, columns, rows));
      withoutIt = Math.min(withoutIt, await timedInsert(database, info.table, columns, rows, index));
    }
    costs.push({ index, table: info.table, size: info.size, insertMicros: withIt, indexMicros: Math.max(0, withIt - withoutIt) });
  }
  return costs;
}
