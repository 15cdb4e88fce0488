import { KNOWN_MIGRATIONS } from "../db/client";
import { quoteIdent, sha256, type Snapshot, type TableCopy } from "./snapshot";

export const BACKUP_FORMAT = "vet-clinic-backup";
export const BACKUP_FORMAT_VERSION = 1;

/** What a backup holds and how to check it; kept inside the file and beside it (`.manifest.json`). */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  app_version: string;
  created_at: string;
  source: string;
  /** How many of the service's migrations the data was written under. */
  schema_version: number;
  schema_tag: string;
  tables: { name: string; columns: string[]; rows: number; sha256: string }[];
}

export type BackupTrigger = "scheduled" | "manual";

/** The manifest beside the file adds the file's own size and digest. */
export interface BackupSidecar extends BackupManifest {
  file: string;
  /** Who asked for it: the schedule, or a person (the API or the `backup` command). Each kind is pruned apart. Absent in older backups: scheduled. */
  trigger?: BackupTrigger;
  size_bytes: number;
  sha256: string;
}

const MANIFEST_PREFIX = "-- manifest: ";
const DATA_MARKER = "-- data";
const END_MARKER = "-- end of backup";
const COPY_LINE = /^COPY public\."((?:[^"]|"")+)" \((.*)\) FROM stdin;$/;

export function manifestOf(snapshot: Snapshot, meta: { appVersion: string; createdAt: Date; source: string }): BackupManifest {
  return {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    app_version: meta.appVersion,
    created_at: meta.createdAt.toISOString(),
    source: meta.source,
    schema_version: snapshot.schemaVersion,
    schema_tag: KNOWN_MIGRATIONS[snapshot.schemaVersion - 1]?.tag ?? "none",
    tables: snapshot.tables.map(({ name, columns, rows, sha256 }) => ({ name, columns, rows, sha256 })),
  };
}

/**
 * A plain SQL script, gzip-compressed: the schema (the migrations the data was written under),
 * Drizzle's record of them, then each table as `COPY … FROM stdin`. psql restores it into an
 * empty PostgreSQL database as it is; `vet-clinic restore` reads the manifest and the data and
 * runs its own migrations instead.
 */
export function backupScript(snapshot: Snapshot, manifest: BackupManifest): Uint8Array {
  const encoder = new TextEncoder();
  const migrations = KNOWN_MIGRATIONS.slice(0, snapshot.schemaVersion);
  const head = [
    "-- vet-clinic-service backup. Restore: `vet-clinic restore FILE`; or into an empty PostgreSQL database:",
    '--   gunzip -c FILE | psql -v ON_ERROR_STOP=1 --single-transaction "$DATABASE_URL"',
    `${MANIFEST_PREFIX}${JSON.stringify(manifest)}`,
    "SET client_encoding = 'UTF8';",
    "SET standard_conforming_strings = on;",
    "SET TimeZone = 'UTC';",
    "SET DateStyle = 'ISO, YMD';",
    "-- Rows loaded are not changes: the audit trigger records no events for them.",
    "SET app.audit = 'off';",
    `-- schema: the service's migrations 1–${migrations.length}`,
    ...migrations.map((m) => `-- migration ${m.tag}\n${m.sql.trim()}\n`),
    "CREATE SCHEMA IF NOT EXISTS drizzle;",
    "CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint);",
    ...migrations.map((m) => `INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('${m.hash}', ${m.when});`),
    DATA_MARKER,
  ].join("\n");
  const parts: Uint8Array[] = [encoder.encode(`${head}\n`)];
  for (const table of snapshot.tables) {
    parts.push(encoder.encode(`COPY public.${quoteIdent(table.name)} (${table.columns.map(quoteIdent).join(", ")}) FROM stdin;\n`), table.data, encoder.encode("\\.\n"));
  }
  parts.push(encoder.encode(`${END_MARKER}\n`));
  return Bun.gzipSync(Buffer.concat(parts));
}

/** A backup that cannot be used: the message says why, in words for the person restoring. */
export class DamagedBackupError extends Error {}

/**
 * Reads and checks a backup before anything is written: the file's digest against the manifest
 * beside it (when there is one), the gzip stream, the end marker, and each table's row count and
 * checksum against the manifest inside.
 */
export function readBackup(file: Uint8Array, sidecar?: BackupSidecar): { manifest: BackupManifest; snapshot: Snapshot } {
  if (sidecar && sha256(file) !== sidecar.sha256) {
    throw new DamagedBackupError(`the file's SHA-256 does not match its manifest (${sidecar.file}): it was changed or damaged after it was written`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(Bun.gunzipSync(new Uint8Array(file)));
  } catch {
    throw new DamagedBackupError("the file is not a complete gzip stream: it was cut short or is not a vet-clinic backup");
  }
  const lines = text.split("\n");
  const manifestLine = lines.find((line) => line.startsWith(MANIFEST_PREFIX));
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(manifestLine!.slice(MANIFEST_PREFIX.length)) as BackupManifest;
  } catch {
    throw new DamagedBackupError("the file has no readable manifest: it is not a vet-clinic backup");
  }
  if (manifest.format !== BACKUP_FORMAT || manifest.format_version !== BACKUP_FORMAT_VERSION) {
    throw new DamagedBackupError(`unknown backup format ${manifest.format}/${manifest.format_version}`);
  }
  if (lines.at(-2) !== END_MARKER) throw new DamagedBackupError("the file ends before its end marker: it was cut short");
  const tables: TableCopy[] = [];
  let index = lines.indexOf(DATA_MARKER) + 1;
  const encoder = new TextEncoder();
  while (index > 0 && index < lines.length && lines[index] !== END_MARKER) {
    const match = COPY_LINE.exec(lines[index]!);
    if (!match) throw new DamagedBackupError(`unexpected line ${index + 1} in the data section`);
    const end = lines.indexOf("\\.", index + 1);
    if (end < 0) throw new DamagedBackupError(`the data of table ${match[1]} is not terminated`);
    const rows = lines.slice(index + 1, end);
    const data = encoder.encode(rows.length ? `${rows.join("\n")}\n` : "");
    const name = match[1]!.replaceAll('""', '"');
    const columns = match[2]!.split(", ").map((c) => c.slice(1, -1).replaceAll('""', '"'));
    tables.push({ name, columns, rows: rows.length, sha256: sha256(data), data });
    index = end + 1;
  }
  if (tables.length !== manifest.tables.length) throw new DamagedBackupError(`the file holds ${tables.length} tables, its manifest lists ${manifest.tables.length}`);
  manifest.tables.forEach((expected, i) => {
    const found = tables[i]!;
    if (found.name !== expected.name || found.rows !== expected.rows || found.sha256 !== expected.sha256) {
      throw new DamagedBackupError(`table ${expected.name} does not match the manifest (${found.rows} rows read, ${expected.rows} expected, or its checksum differs): the file was edited or damaged`);
    }
  });
  return { manifest, snapshot: { schemaVersion: manifest.schema_version, tables } };
}
