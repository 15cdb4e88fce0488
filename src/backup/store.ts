import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json";
import type { Database } from "../db/client";
import type { Clock } from "../lib/clock";
import { loggableError } from "../lib/error-log";
import type { Logger } from "../lib/logger";
import { AppError } from "../lib/errors";
import { MINUTE } from "../lib/clock";
import { backupScript, manifestOf, type BackupSidecar, type BackupTrigger } from "./format";
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
  backupNow(trigger: BackupTrigger = "scheduled"): Promise<BackupInfo> {
    this.running ??= this.write(trigger).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Whether a backup is being written now. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  private async write(trigger: BackupTrigger): Promise<BackupInfo> {
    const started = performance.now();
    const createdAt = this.clock.now();
    const snapshot = await takeSnapshot(this.database);
    const snapshotMs = performance.now() - started;
    const manifest = manifestOf(snapshot, { appVersion: pkg.version, createdAt, source: this.database.kind });
    const file = backupScript(snapshot, manifest);
    mkdirSync(this.settings.dir, { recursive: true });
    const name = fileName(createdAt);
    const sidecar: BackupSidecar = { ...manifest, file: name, trigger, size_bytes: file.byteLength, sha256: sha256(file) };
    const path = join(this.settings.dir, name);
    writeFileSync(`${path}.partial`, file, { mode: 0o600 });
    renameSync(`${path}.partial`, path);
    writeFileSync(`${path}${SIDECAR_SUFFIX}`, JSON.stringify(sidecar, null, 2), { mode: 0o600 });
    this.prune(trigger);
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

  /** Keeps the newest `keep` of one kind: manual backups never push out the scheduled restore points. */
  private prune(trigger: BackupTrigger): void {
    for (const old of this.list().filter((backup) => (backup.trigger ?? "scheduled") === trigger).slice(this.settings.keep)) {
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
  private lastManualAt: number | undefined;

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

  /**
   * A backup a person asks for: one at a time, and at most one a minute (each holds up every
   * clinic's writes while it reads); it prunes only earlier manual backups.
   */
  async takeManual(): Promise<BackupInfo> {
    if (this.store.busy) throw new AppError("CONFLICT", "A backup is being written now; try again when it has finished");
    const now = this.clock.now().getTime();
    if (this.lastManualAt !== undefined && now - this.lastManualAt < MINUTE) {
      const retryAfter = Math.max(1, Math.ceil((this.lastManualAt + MINUTE - now) / 1000));
      throw new AppError("RATE_LIMIT_EXCEEDED", "At most one manual backup a minute", { retry_after: retryAfter }, { "retry-after": String(retryAfter) });
    }
    this.lastManualAt = now;
    return this.store.backupNow("manual");
  }

  /** Takes the scheduled backup if it is due; returns whether one was taken. */
  async tick(): Promise<boolean> {
    const due = this.store.nextDue(this.since);
    if (!due || due.getTime() > this.clock.now().getTime() || this.store.busy) return false;
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
