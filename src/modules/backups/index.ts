import { Elysia } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses } from "../../http/common-model";
import { AppError } from "../../lib/errors";
import type { BackupInfo } from "../../backup/store";
import { BackupListModel, BackupTakenModel } from "./model";

const ON_POSTGRES = "This server runs on PostgreSQL: back it up with pg_dump or your provider's managed backups (see docs/backups.md)";

const backupView = ({ file, trigger, created_at, size_bytes, sha256, schema_version, schema_tag, app_version, tables }: BackupInfo) => ({
  file, trigger: trigger ?? "scheduled", created_at, size_bytes, sha256, schema_version, schema_tag, app_version,
  tables: tables.map(({ name, rows, sha256: digest }) => ({ name, rows, sha256: digest })),
});

/** Backups of the embedded database, for install administrators: take one now, list them. */
export const backupsModule = ({ auth, backups, config }: AppContext) =>
  new Elysia({ prefix: "/admin/backups", tags: ["admin"] as never })
    .use(auth)
    .guard({ auth: "admin" as const })
    .post(
      "/",
      async ({ status }) => {
        if (!backups) throw new AppError("CONFLICT", ON_POSTGRES);
        const taken = await backups.takeManual();
        return status(201, { ...backupView(taken), timings: taken.timings ?? { snapshot_ms: 0, total_ms: 0 } });
      },
      {
        response: { 201: BackupTakenModel, ...errorResponses(401, 403, 409, 429) },
        detail: {
          summary: "Take a backup of the embedded database now (writes wait only while it is read); at most one a minute, never pruning scheduled ones",
          "x-statuses": { "409": "CONFLICT: the server runs on PostgreSQL, or a backup is being written", "429": "RATE_LIMIT_EXCEEDED: a manual backup was taken less than a minute ago" },
        },
      },
    )
    .get(
      "/",
      () => {
        if (!backups) return { enabled: false, reason: ON_POSTGRES, dir: null, interval_ms: null, keep: config.backup.keep, next_at: null, backups: [] };
        const next = backups.nextAt();
        return {
          enabled: true,
          dir: backups.store.settings.dir,
          interval_ms: backups.store.settings.intervalMs,
          keep: backups.store.settings.keep,
          next_at: next ? next.toISOString() : null,
          backups: backups.store.list().map(backupView),
        };
      },
      { response: { 200: BackupListModel, ...errorResponses(401, 403) }, detail: { summary: "The backups in BACKUP_DIR, newest first, and the schedule" } },
    );
