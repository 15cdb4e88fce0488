import { createHash } from "node:crypto";
import { KNOWN_MIGRATIONS, type CopySession, type Database } from "../db/client";

/** One table's rows in COPY text format, sorted by its primary key, with what verifies them. */
export interface TableCopy {
  name: string;
  columns: string[];
  rows: number;
  sha256: string;
  data: Uint8Array;
}

/** Every table of the service as of one moment, in an order that loads without breaking a foreign key. */
export interface Snapshot {
  /** How many of the service's migrations the database had applied. */
  schemaVersion: number;
  tables: TableCopy[];
}

export type Progress = (line: string) => void;

export const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
export const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");
const lineCount = (data: Uint8Array) => data.reduce((n, byte) => n + (byte === 10 ? 1 : 0), 0);

interface TableShape {
  name: string;
  columns: string[];
  /** ORDER BY that makes the copy the same text on every server. */
  order: string;
}

/** The public tables, their columns and keys, parents before children. */
async function tableShapes(session: CopySession): Promise<TableShape[]> {
  const columns = await session.query<{ table_name: string; column_name: string; data_type: string }>(
    "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE') ORDER BY table_name, ordinal_position",
  );
  const keys = await session.query<{ table_name: string; column_name: string; position: number }>(
    "SELECT c.relname AS table_name, a.attname AS column_name, array_position(i.indkey::int2[], a.attnum) AS position FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) WHERE n.nspname = 'public' AND i.indisprimary",
  );
  const references = await session.query<{ child: string; parent: string }>(
    "SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE k.contype = 'f' AND n.nspname = 'public'",
  );
  const byTable = new Map<string, { column: string; type: string }[]>();
  for (const row of columns) byTable.set(row.table_name, [...(byTable.get(row.table_name) ?? []), { column: row.column_name, type: row.data_type }]);
  const shapes = new Map<string, TableShape>();
  for (const [name, cols] of byTable) {
    const key = keys.filter((k) => k.table_name === name).sort((a, b) => Number(a.position) - Number(b.position));
    const textual = (column: string) => ["text", "character varying", "character"].includes(cols.find((c) => c.column === column)?.type ?? "");
    // Text keys sort byte-wise (COLLATE "C"): servers with different locales then agree.
    const order = key.length
      ? key.map((k) => `${quoteIdent(k.column_name)}${textual(k.column_name) ? ' COLLATE "C"' : ""}`).join(", ")
      : `(${quoteIdent(name)}.*)::text COLLATE "C"`;
    shapes.set(name, { name, columns: cols.map((c) => c.column), order });
  }
  // Parents first; a table's references to itself are checked at the end of its COPY.
  const ordered: TableShape[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    if (ordered.some((shape) => shape.name === name) || visiting.has(name)) return;
    visiting.add(name);
    for (const ref of references) if (ref.child === name && ref.parent !== name) visit(ref.parent);
    ordered.push(shapes.get(name)!);
  };
  for (const name of [...shapes.keys()].sort()) visit(name);
  return ordered;
}

async function copyTable(session: CopySession, shape: TableShape): Promise<TableCopy> {
  const data = await session.copyOut(`SELECT ${shape.columns.map(quoteIdent).join(", ")} FROM public.${quoteIdent(shape.name)} ORDER BY ${shape.order}`);
  return { name: shape.name, columns: shape.columns, rows: lineCount(data), sha256: sha256(data), data };
}

/** The migrations a database has applied, checked against the ones this version knows. */
export async function appliedMigrations(session: Pick<CopySession, "query">): Promise<number> {
  const exists = await session.query<{ present: boolean }>("SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present");
  if (!exists[0]?.present) return 0;
  const applied = await session.query<{ hash: string }>("SELECT hash FROM drizzle.__drizzle_migrations ORDER BY created_at, id");
  applied.forEach((row, index) => {
    if (KNOWN_MIGRATIONS[index]?.hash !== row.hash) {
      throw new Error(`the database has a migration this version does not know (number ${index + 1}); use the version of vet-clinic that wrote it, or a newer one`);
    }
  });
  return applied.length;
}

/**
 * Reads every table in one REPEATABLE READ transaction: a consistent copy while the service
 * keeps serving. On the embedded database other statements wait while it runs (one connection),
 * so only the copy into memory happens inside; compressing and writing come after.
 */
export async function takeSnapshot(database: Database, progress: Progress = () => {}): Promise<Snapshot> {
  return database.copyTransaction("snapshot", async (session) => {
    const schemaVersion = await appliedMigrations(session);
    const tables: TableCopy[] = [];
    for (const shape of await tableShapes(session)) {
      const copy = await copyTable(session, shape);
      tables.push(copy);
      progress(`read ${copy.name}: ${copy.rows} rows`);
    }
    return { schemaVersion, tables };
  });
}

const RESUME_IDENTITY_SEQUENCES = `DO $$ DECLARE c record; BEGIN
  FOR c IN SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES' LOOP
    EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), coalesce((SELECT max(%I) FROM public.%I), 0) + 1, false)', 'public.' || c.table_name, c.column_name, c.column_name, c.table_name);
  END LOOP;
END $$`;

/**
 * Loads a snapshot into an empty database: its schema brought to the snapshot's version, every
 * table copied in and read back to compare checksums (all in one transaction, so a mismatch
 * leaves nothing behind), then the newer migrations of this version applied.
 */
export async function loadSnapshot(target: Database, snapshot: Snapshot, progress: Progress = () => {}): Promise<void> {
  if (snapshot.schemaVersion > KNOWN_MIGRATIONS.length) {
    throw new Error(`the backup was made by a newer version (schema ${snapshot.schemaVersion}, this version knows ${KNOWN_MIGRATIONS.length}); restore it with that version`);
  }
  const present = await target.copyTransaction("snapshot", (session) => appliedMigrations(session));
  if (present > snapshot.schemaVersion) throw new Error(`the target database is at a newer schema (${present}) than the backup (${snapshot.schemaVersion}); use an empty database`);
  await target.migrate(snapshot.schemaVersion);
  await target.copyTransaction("load", async (session) => {
    for (const table of snapshot.tables) {
      const [row] = await session.query<{ taken: boolean }>(`SELECT EXISTS (SELECT 1 FROM public.${quoteIdent(table.name)}) AS taken`);
      if (row?.taken) throw new Error(`the target database is not empty (table ${table.name} has rows); move or restore into an empty database`);
    }
    const shapes = new Map((await tableShapes(session)).map((shape) => [shape.name, shape]));
    for (const table of snapshot.tables) {
      const shape = shapes.get(table.name);
      if (!shape || shape.columns.join() !== table.columns.join()) throw new Error(`table ${table.name} does not have the backup's columns at schema ${snapshot.schemaVersion}`);
      await session.copyIn(`public.${quoteIdent(table.name)}`, table.columns.map(quoteIdent), table.data);
      const copied = await copyTable(session, shape);
      if (copied.sha256 !== table.sha256 || copied.rows !== table.rows) {
        throw new Error(`table ${table.name} reads back differently after loading (${copied.rows} rows, expected ${table.rows}); nothing was written`);
      }
      progress(`wrote ${table.name}: ${table.rows} rows, checksum verified`);
    }
    // Identity columns (the event log's order) go on from the rows loaded, not from 1.
    await session.query(RESUME_IDENTITY_SEQUENCES);
  });
  await target.migrate();
}
