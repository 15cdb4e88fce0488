import { t } from "elysia";
import { Nullable, NullableString, NullableTimestamp, Timestamp } from "../../http/common-model";

export const BackupModel = t.Object({
  file: t.String({ description: "The file's name in BACKUP_DIR" }),
  trigger: t.Union([t.Literal("scheduled"), t.Literal("manual")], { description: "scheduled (BACKUP_INTERVAL) or manual (the API or the backup command); BACKUP_KEEP applies to each apart" }),
  created_at: Timestamp,
  size_bytes: t.Integer(),
  sha256: t.String({ description: "SHA-256 of the file (hex)" }),
  schema_version: t.Integer({ description: "How many of the service's migrations the data was written under" }),
  schema_tag: t.String(),
  app_version: t.String(),
  tables: t.Array(t.Object({ name: t.String(), rows: t.Integer(), sha256: t.String({ description: "SHA-256 of the table's COPY text" }) })),
});

export const BackupTakenModel = t.Composite([
  BackupModel,
  t.Object({ timings: t.Object({ snapshot_ms: t.Integer({ description: "How long the consistent read took (other statements waited this long at most)" }), total_ms: t.Integer() }) }),
]);

export const BackupListModel = t.Object({
  enabled: t.Boolean({ description: "false on PostgreSQL: back it up with pg_dump or the provider's backups" }),
  reason: t.Optional(t.String()),
  dir: NullableString(),
  interval_ms: Nullable(t.Integer(), { description: "null: no scheduled backups (BACKUP_INTERVAL=off)" }),
  keep: t.Integer(),
  next_at: NullableTimestamp,
  backups: t.Array(BackupModel),
});

export type BackupTakenView = typeof BackupTakenModel.static;
export type BackupListView = typeof BackupListModel.static;
