-- One cancellation window: calendar_settings.cancellation_window_minutes. A clinic whose
-- clinics.cancellation_window_hours differs from its default (24) keeps that window, in minutes
-- (within the setting's 0–43,200), unless its calendar settings already hold a window of their
-- own (the owner set it there). Moving a setting is no one's change: it writes no events.
DO $$
DECLARE
  previous text := coalesce(current_setting('app.audit', true), '');
BEGIN
  PERFORM set_config('app.audit', 'off', false);
  INSERT INTO "calendar_settings" ("clinic_id", "cancellation_window_minutes", "updated_at")
  SELECT c."id", least(greatest(c."cancellation_window_hours", 0), 720) * 60, now()
  FROM "clinics" c
  WHERE c."cancellation_window_hours" <> 24
  ON CONFLICT ("clinic_id") DO UPDATE SET "cancellation_window_minutes" = excluded."cancellation_window_minutes", "updated_at" = excluded."updated_at"
  WHERE "calendar_settings"."cancellation_window_minutes" = 1440;
  -- Only the supported languages remain (the check below); anything else reads as Spanish.
  UPDATE "clinics" SET "language" = 'es' WHERE "language" NOT IN ('es', 'en');
  -- Back to what the session had (a restore that replays the migrations keeps its own 'off').
  PERFORM set_config('app.audit', previous, false);
END $$;--> statement-breakpoint
ALTER TABLE "clinics" DROP COLUMN "cancellation_window_hours";--> statement-breakpoint
ALTER TABLE "clinics" ADD CONSTRAINT "clinics_language_check" CHECK ("clinics"."language" in ('es', 'en'));
