import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Config } from "../config";
import { redactUrl } from "../db/client";
import { lockDataDir } from "../db/data-dir-lock";
import { readBackup, type BackupSidecar } from "../backup/format";
import { loadSnapshot, takeSnapshot, type Progress } from "../backup/snapshot";
import { BackupStore } from "../backup/store";
import type { Clock } from "../lib/clock";
import { withDatabase, type EarlyStart } from "./with-database";
import { keyMatches } from "./secrets";

const SEALED_THINGS = "stored secrets (CAF keys, the certificate's key, webhook secrets)";

/**
 * Which secrets key a copy of the data needs and where this one is: the secrets travel sealed,
 * and open only with the key they were sealed with.
 */
export function secretsKeyNote(config: Pick<Config, "secretsKeySource">, what: "backup" | "move-to", matches?: boolean | undefined): string {
  const source = config.secretsKeySource ?? "SECRETS_KEY";
  if (what === "backup") return `Its ${SEALED_THINGS} are sealed with the secrets key from ${source}: a restore needs that same key, so keep a copy of it apart from the backups.`;
  if (matches === false) return `The ${SEALED_THINGS} are not sealed with this configuration's key (from ${source}): start with the key of the install the data came from, or run \`secrets rekey --from OLD_KEY\` to seal them under this one.`;
  return `The ${SEALED_THINGS} are sealed with the secrets key from ${source}: start the service there with that same key (SECRETS_KEY set to it), or it refuses to start.`;
}

/** After data was loaded into this configuration's database: whether its key opens the secrets. */
function loadedKeyNote(config: Pick<Config, "secretsKeySource">, matches: boolean | undefined): string {
  const source = config.secretsKeySource ?? "SECRETS_KEY";
  if (matches === true) return `Its ${SEALED_THINGS} open with this configuration's secrets key (from ${source}).`;
  if (matches === false) return secretsKeyNote(config, "move-to", false);
  return `Its ${SEALED_THINGS}, if any, open only with the secrets key of the install the data came from: start with that key (SECRETS_KEY); the server checks it at start.`;
}

/** Progress lines go to stderr, so stdout keeps only the result. */
const progress: Progress = (line) => process.stderr.write(`  ${line}\n`);

const embeddedDir = (config: Config) => join(config.dataDir, "pg");
const hasData = (dir: string) => existsSync(dir) && readdirSync(dir).length > 0;

/**
 * Makes DATA_DIR ready to receive data: refuses while a server owns it, and, when it already holds
 * a database, refuses unless `force`, which moves that database aside (never deletes it).
 */
function prepareEmbeddedTarget(config: Config, force: boolean, clock: Clock): string | null {
  mkdirSync(config.dataDir, { recursive: true });
  lockDataDir(config.dataDir).release(); // throws, naming the PID, while a server owns the directory
  const dir = embeddedDir(config);
  if (!hasData(dir)) return null;
  if (!force) throw new Error(`${dir} already holds a database; restore into an empty DATA_DIR, or pass --force to move it aside and replace it`);
  const aside = `${dir}.before-${clock.now().toISOString().replaceAll(":", "-")}`;
  renameSync(dir, aside);
  return aside;
}

/** `vet-clinic backup`: one backup of the embedded database now, while no server runs. */
export async function backupCommand(config: Config, clock: Clock, { compiledPostgres }: EarlyStart = {}): Promise<BackupSidecar> {
  if (config.databaseUrl) throw new Error("backup works on the embedded database; back up PostgreSQL with pg_dump or your provider's backups");
  return withDatabase({ dataDir: config.dataDir, migrate: true, compiledPostgres }, (database) => new BackupStore(database, clock, config.backup).backupNow("manual"));
}

/** `vet-clinic restore FILE [--force]`: checks the file, then loads it into the configured database. */
export async function restoreCommand(config: Config, clock: Clock, file: string, force: boolean, { compiledPostgres }: EarlyStart = {}): Promise<string> {
  const path = resolve(file);
  if (!existsSync(path)) throw new Error(`${path} does not exist`);
  const sidecarPath = `${path}.manifest.json`;
  const sidecar = existsSync(sidecarPath) ? (JSON.parse(readFileSync(sidecarPath, "utf8")) as BackupSidecar) : undefined;
  process.stderr.write(`checking ${basename(path)}${sidecar ? " against its manifest" : " (no .manifest.json beside it: checking the manifest inside)"}\n`);
  const { manifest, snapshot } = readBackup(readFileSync(path), sidecar);
  process.stderr.write(`backup of ${manifest.created_at}, schema ${manifest.schema_version} (${manifest.schema_tag}), ${manifest.tables.reduce((n, t) => n + t.rows, 0)} rows: checksums verified\n`);
  if (config.databaseUrl && force) throw new Error("--force replaces an embedded data directory only; for PostgreSQL, restore into an empty database you create");
  const aside = config.databaseUrl ? null : prepareEmbeddedTarget(config, force, clock);
  const matches = await withDatabase({ databaseUrl: config.databaseUrl, databaseDirectUrl: config.databaseDirectUrl, dataDir: config.dataDir, compiledPostgres }, async (database) => {
    await loadSnapshot(database, snapshot, progress);
    return keyMatches(database, config);
  });
  return `restored ${basename(path)} into ${config.databaseUrl ? redactUrl(config.databaseUrl) : embeddedDir(config)}${aside ? ` (the previous database was moved to ${aside})` : ""}\n${loadedKeyNote(config, matches)}`;
}

/**
 * `vet-clinic move --to URL` copies the embedded database into an empty PostgreSQL database;
 * `--from URL` copies a PostgreSQL database into DATA_DIR. Both verify every table's rows and
 * checksum in the target before they finish; the source is never changed.
 */
export async function moveCommand(config: Config, clock: Clock, direction: { to?: string; from?: string }, force: boolean, { compiledPostgres }: EarlyStart = {}): Promise<string> {
  const url = direction.to ?? direction.from;
  if (!url || (direction.to && direction.from)) throw new Error("move needs exactly one of --to postgres://… (embedded → PostgreSQL) or --from postgres://… (PostgreSQL → embedded)");
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error("move --to/--from takes a postgres:// URL");
  if (direction.to) {
    process.stderr.write(`reading the embedded database in ${embeddedDir(config)}\n`);
    const snapshot = await withDatabase({ dataDir: config.dataDir, migrate: true, compiledPostgres }, (source) => takeSnapshot(source, progress));
    process.stderr.write(`writing to ${redactUrl(url)}\n`);
    await withDatabase({ databaseUrl: url, dataDir: config.dataDir }, (target) => loadSnapshot(target, snapshot, progress));
    return `moved ${snapshot.tables.reduce((n, t) => n + t.rows, 0)} rows to ${redactUrl(url)}; every table verified.\nStart the service on it with DATABASE_URL set to the URL you passed (${redactUrl(url)}; its password is not printed):\n  DATABASE_URL=postgres://… vet-clinic\n(the embedded database in ${embeddedDir(config)} is unchanged; keep it until you are sure)\n${secretsKeyNote(config, "move-to")}`;
  }
  process.stderr.write(`reading ${redactUrl(url)}\n`);
  const snapshot = await withDatabase({ databaseUrl: url, dataDir: config.dataDir }, (source) => takeSnapshot(source, progress));
  const aside = prepareEmbeddedTarget(config, force, clock);
  process.stderr.write(`writing the embedded database in ${embeddedDir(config)}\n`);
  const matches = await withDatabase({ dataDir: config.dataDir, compiledPostgres }, async (target) => {
    await loadSnapshot(target, snapshot, progress);
    return keyMatches(target, config);
  });
  return `moved ${snapshot.tables.reduce((n, t) => n + t.rows, 0)} rows into ${embeddedDir(config)}; every table verified. Start the service without DATABASE_URL to use it.${aside ? ` (the previous database was moved to ${aside})` : ""}\n${loadedKeyNote(config, matches)}`;
}
