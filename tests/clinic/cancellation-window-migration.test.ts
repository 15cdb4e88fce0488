/**
 * The single-cancellation-window migration leaves one cancellation window (calendar_settings.cancellation_window_minutes):
 * a clinic's non-default clinics.cancellation_window_hours moves there in minutes, unless the
 * calendar settings already hold a window of their own; then the column goes.
 */
import { afterAll, expect, test } from "bun:test";
import { KNOWN_MIGRATIONS } from "../../src/db/client";
import { createTestDatabase, type TestDatabase } from "../helpers/database";

let database: TestDatabase;
afterAll(() => database?.destroy());

const clinic = (n: number) => `01900000-0000-7000-8000-0000000000${String(n).padStart(2, "0")}`;

test("a non-default window in hours moves to the calendar setting; the owner's own setting and the default stay", async () => {
  database = await createTestDatabase();
  const migration = KNOWN_MIGRATIONS.find((m) => m.tag.endsWith("_single_cancellation_window"))!;
  // Back to the schema before the migration, for the two things it changes; later migrations
  // do not touch either.
  await database.query(`alter table clinics drop constraint clinics_language_check, add column cancellation_window_hours integer default 24 not null`);
  // 1: default hours, no settings. 2: 36 hours, no settings. 3: 12 hours, settings at the default.
  // 4: 48 hours, settings the owner set to 90 minutes. 5: 0 hours. 6: a language no longer offered.
  for (const [n, hours, language] of [[1, 24, "es"], [2, 36, "en"], [3, 12, "es"], [4, 48, "es"], [5, 0, "es"], [6, 24, "fr"]] as const) {
    await database.query(
      `insert into clinics (id, name, timezone, currency, tax_rate_bps, plan, language, cancellation_window_hours, created_at, updated_at) values ($1, $2, 'America/Santiago', 'CLP', 1900, 'standard', $3, $4, now(), now())`,
      [clinic(n), `Clinic ${n}`, language, hours],
    );
  }
  await database.query(`insert into calendar_settings (clinic_id, cancellation_window_minutes, updated_at) values ($1, 1440, now()), ($2, 90, now())`, [clinic(3), clinic(4)]);
  const eventsBefore = await database.query<{ n: number }>("select count(*)::int as n from events");

  for (const statement of migration.sql.split("--> statement-breakpoint")) await database.query(statement);

  const windows = await database.query<{ id: string; minutes: number | null }>(
    `select c.id, s.cancellation_window_minutes as minutes from clinics c left join calendar_settings s on s.clinic_id = c.id where c.id = any($1::uuid[]) order by c.id`,
    [[1, 2, 3, 4, 5, 6].map(clinic)],
  );
  expect(windows.map((w) => w.minutes)).toEqual([null, 36 * 60, 12 * 60, 90, 0, null]);
  const columns = await database.query("select 1 from information_schema.columns where table_name = 'clinics' and column_name = 'cancellation_window_hours'");
  expect(columns).toHaveLength(0);
  const languages = await database.query<{ language: string }>("select language from clinics where id = any($1::uuid[]) order by id", [[2, 6].map(clinic)]);
  expect(languages.map((l) => l.language)).toEqual(["en", "es"]);
  await expect(database.query("update clinics set language = 'fr' where id = $1", [clinic(1)])).rejects.toThrow();
  // Moving a setting is no one's change.
  expect(await database.query<{ n: number }>("select count(*)::int as n from events")).toEqual(eventsBefore);
});
