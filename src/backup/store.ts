import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json";
import type { Database } from "../db/client";
import type { Clock } from "../lib/clock";
import { loggableError } from "../lib/error-log";
import type { Logger } from "../lib/logger";
import { backupScript, manifestOf, type BackupSidecar } from "./format";
import { sha256, takeSnapshot } from "./snapshot";

const SIDECAR_SUFFIX = ".manifest.json";

export interface BackupSettings {
  dir: string;
  /** Milliseconds between scheduled backups; null: none are scheduled. */
  intervalMs: number | null;
  keep: number;
}

/** Timings of one backup, for the log and the API: how long writes waited (the snapshot) and the whole. */
export interface BackupTimings {
  snapshot_ms: number;
  total_ms: number;
}

export type BackupInfo = BackupSidecar & { timings?: BackupTimings };

/** `vet-clinic-2026-11-24T04-13-00-123Z.sql.gz`: sorts by time, safe on every file system. */
const fileName = (at: Date) => `vet-clinic-${at.toISOString().replaceAll(":", "-").replace(".", "-")}.sql.gz`;

/**
 * The backups of an embedded database, in one directory: each a `.sql.gz` file and its
 * `.manifest.json`. Writes go to a temporary name first, so a crash never leaves a half file
 * under a backup's name; the newest `keep` are kept.
 */
export class BackupStore {
  private running: Promise<BackupInfo> | undefined;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    readonly settings: BackupSettings,
    private readonly logger?: Logger,
  ) {}

  /** Takes a backup now; calls that arrive while one runs share it. */
  backupNow(): Promise<BackupInfo> {
    this.running ??= this.write().finally(() => (this.running = undefined));
    return this.running;
  }

  private async write(): Promise<BackupInfo> {
    const started = performance.now();
    const createdAt = this.clock.now();
    const snapshot = await takeSnapshot(this.database);
    const snapshotMs = performance.now() - started;
    const manifest = manifestOf(snapshot, { appVersion: pkg.version, createdAt, source: this.database.kind });
    const file = backupScript(snapshot, manifest);
    mkdirSync(this.settings.dir, { recursive: true });
    const name = fileName(createdAt);
    const sidecar: BackupSidecar = { ...manifest, file: name, size_bytes: file.byteLength, sha256: sha256(file) };
    const path = join(this.settings.dir, name);
    writeFileSync(`${path}.partial`, file, { mode: 0o600 });
    renameSync(`${path}.partial`, path);
    writeFileSync(`${path}${SIDECAR_SUFFIX}`, JSON.stringify(sidecar, null, 2), { mode: 0o600 });
    this.prune();
    const timings = { snapshot_ms: Math.round(snapshotMs), total_ms: Math.round(performance.now() - started) };
    this.logger?.info("backup written", { file: path, size_bytes: file.byteLength, rows: snapshot.tables.reduce((n, t) => n + t.rows, 0), ...timings });
    return { ...sidecar, timings };
  }

  /** The backups in the directory, newest first (a file without its manifest is not listed). */
  list(): BackupSidecar[] {
    if (!existsSync(this.settings.dir)) return [];
    return readdirSync(this.settings.dir)
      .filter((entry) => entry.endsWith(SIDECAR_SUFFIX))
      .flatMap((entry) => {
        try {
          return [JSON.parse(readFileSync(join(this.settings.dir, entry), "utf8")) as BackupSidecar];
        } catch {
          return [];
        }
      })
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
  }

  private prune(): void {
    for (const old of this.list().slice(this.settings.keep)) {
      rmSync(join(this.settings.dir, old.file), { force: true });
      rmSync(join(this.settings.dir, `${old.file}${SIDECAR_SUFFIX}`), { force: true });
    }
  }

  /** When the next scheduled backup is due: an interval after the newest one, or after `since`. */
  nextDue(since: Date): Date | null {
    if (this.settings.intervalMs === null) return null;
    const newest = this.list()[0];
    const from = newest ? Math.max(Date.parse(newest.created_at), 0) : since.getTime();
    return new Date(from + this.settings.intervalMs);
  }
}

/** Checks once a minute (and at `tick`) whether a scheduled backup is due; failures are logged, never thrown. */
export class BackupScheduler {
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly since: Date;

  constructor(
    readonly store: BackupStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.since = clock.now();
  }

  start(): void {
    if (this.store.settings.intervalMs === null) return;
    this.timer = setInterval(() => void this.tick(), Math.min(60_000, this.store.settings.intervalMs));
    this.timer.unref?.();
  }

  /** Takes the scheduled backup if it is due; returns whether one was taken. */
  async tick(): Promise<boolean> {
    const due = this.store.nextDue(this.since);
    if (!due || due.getTime() > this.clock.now().getTime()) return false;
    try {
      await this.store.backupNow();
      return true;
    } catch (error) {
      this.logger.error("scheduled backup failed", loggableError(error));
      return false;
    }
  }

  nextAt(): Date | null {
    return this.store.nextDue(this.since);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
