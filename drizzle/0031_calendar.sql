CREATE TABLE "appointment_types" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL,
	"duration_minutes" integer NOT NULL,
	"buffer_before_minutes" integer DEFAULT 0 NOT NULL,
	"buffer_after_minutes" integer DEFAULT 0 NOT NULL,
	"species" text[] DEFAULT '{}'::text[] NOT NULL,
	"vet_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"room_required" boolean DEFAULT false NOT NULL,
	"bookable_online" boolean DEFAULT false NOT NULL,
	"min_notice_minutes" integer DEFAULT 0 NOT NULL,
	"max_advance_days" integer DEFAULT 90 NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "appointment_types_duration_check" CHECK ("appointment_types"."duration_minutes" between 5 and 1440)
);
--> statement-breakpoint
CREATE TABLE "calendar_feeds" (
	"clinic_id" uuid NOT NULL,
	"user_id" uuid PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "calendar_feeds_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "calendar_settings" (
	"clinic_id" uuid PRIMARY KEY NOT NULL,
	"slug" text,
	"opening_hours" jsonb,
	"auto_confirm_online_bookings" boolean DEFAULT false NOT NULL,
	"cancellation_window_minutes" integer DEFAULT 1440 NOT NULL,
	"slot_step_minutes" integer,
	"show_vet_names_online" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "clinic_closures" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"day" date NOT NULL,
	"reason" text,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "rooms" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "time_off" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"user_id" uuid NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"reason" text,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "time_off_ends_after_start_check" CHECK ("time_off"."ends_at" > "time_off"."starts_at")
);
--> statement-breakpoint
CREATE TABLE "working_hours" (
	"clinic_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"intervals" jsonb NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "working_hours_clinic_id_user_id_pk" PRIMARY KEY("clinic_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "visits" DROP CONSTRAINT "visits_status_check";--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "ends_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "appointment_type_id" uuid;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "room_id" uuid;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "buffer_before_minutes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "buffer_after_minutes" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "appointment_types_clinic_created_idx" ON "appointment_types" USING btree ("clinic_id","created_at","id") WHERE "appointment_types"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "calendar_settings_slug_key" ON "calendar_settings" USING btree ("slug");--> statement-breakpoint
CREATE UNIQUE INDEX "clinic_closures_clinic_day_key" ON "clinic_closures" USING btree ("clinic_id","day") WHERE "clinic_closures"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "rooms_clinic_created_idx" ON "rooms" USING btree ("clinic_id","created_at","id") WHERE "rooms"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "time_off_clinic_user_idx" ON "time_off" USING btree ("clinic_id","user_id","starts_at") WHERE "time_off"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_clinic_room_scheduled_idx" ON "visits" USING btree ("clinic_id","room_id","scheduled_at") WHERE "visits"."deleted_at" is null and "visits"."room_id" is not null;--> statement-breakpoint
ALTER TABLE "visits" ADD CONSTRAINT "visits_ends_after_start_check" CHECK ("visits"."ends_at" > "visits"."scheduled_at");--> statement-breakpoint
ALTER TABLE "visits" ADD CONSTRAINT "visits_buffers_check" CHECK ("visits"."buffer_before_minutes" between 0 and 1440 and "visits"."buffer_after_minutes" between 0 and 1440);--> statement-breakpoint
ALTER TABLE "visits" ADD CONSTRAINT "visits_status_check" CHECK ("visits"."status" in ('requested', 'scheduled', 'in_progress', 'completed', 'cancelled', 'no_show'));--> statement-breakpoint
-- Existing visits last 30 minutes, or up to the same vet's next visit when that starts sooner:
-- they were booked as points in time, and the exclusion constraints below must hold for them.
-- The backfill is no one's change: it writes no events.
DO $$
DECLARE
  previous text := coalesce(current_setting('app.audit', true), '');
BEGIN
  PERFORM set_config('app.audit', 'off', false);
  UPDATE "visits" v SET "ends_at" = least(v."scheduled_at" + interval '30 minutes', coalesce((
    SELECT min(n."scheduled_at") FROM "visits" n
    WHERE n."clinic_id" = v."clinic_id" AND n."vet_id" = v."vet_id" AND n."scheduled_at" > v."scheduled_at"
      AND n."deleted_at" IS NULL AND n."status" NOT IN ('cancelled', 'no_show')
  ), 'infinity'));
  -- Back to what the session had (a restore that replays the migrations keeps its own 'off').
  PERFORM set_config('app.audit', previous, false);
END $$;--> statement-breakpoint
ALTER TABLE "visits" ALTER COLUMN "ends_at" SET NOT NULL;--> statement-breakpoint
-- A column default cannot read another column: an insert without ends_at gets start + 30 minutes.
CREATE OR REPLACE FUNCTION visits_default_ends_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.ends_at IS NULL THEN NEW.ends_at := NEW.scheduled_at + interval '30 minutes'; END IF;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE TRIGGER visits_default_ends_at BEFORE INSERT ON "visits" FOR EACH ROW EXECUTE FUNCTION visits_default_ends_at();--> statement-breakpoint
-- btree_gist lets one GiST index compare the vet (=) and the time range (&&) together.
CREATE EXTENSION IF NOT EXISTS btree_gist;--> statement-breakpoint
-- The time a visit holds: from its start less the buffer before to its end plus the buffer after.
-- Adding minutes to a timestamptz does not depend on the session's time zone (only days and
-- months do), so the function is immutable and may appear in an index.
CREATE OR REPLACE FUNCTION visit_hold(starts timestamptz, ends timestamptz, before_minutes integer, after_minutes integer)
RETURNS tstzrange LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT tstzrange(starts - make_interval(mins => before_minutes), ends + make_interval(mins => after_minutes), '[)') $$;--> statement-breakpoint
-- Visits already booked twice for the same vet at the same minute cannot be fitted: say which.
DO $$
DECLARE clash record;
BEGIN
  SELECT a.id AS first, b.id AS second INTO clash FROM "visits" a JOIN "visits" b
    ON a."clinic_id" = b."clinic_id" AND a."vet_id" = b."vet_id" AND a."id" < b."id" AND a."scheduled_at" = b."scheduled_at"
  WHERE a."deleted_at" IS NULL AND b."deleted_at" IS NULL AND a."status" NOT IN ('cancelled', 'no_show') AND b."status" NOT IN ('cancelled', 'no_show')
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'Visits % and % have the same vet at the same time; cancel or move one, then start again', clash.first, clash.second;
  END IF;
END $$;--> statement-breakpoint
-- Two live visits never hold the same vet, or the same room, at the same time.
ALTER TABLE "visits" ADD CONSTRAINT "visits_vet_time_excl" EXCLUDE USING gist (
  "clinic_id" WITH =, "vet_id" WITH =, visit_hold("scheduled_at", "ends_at", "buffer_before_minutes", "buffer_after_minutes") WITH &&
) WHERE ("deleted_at" IS NULL AND "vet_id" IS NOT NULL AND "status" NOT IN ('cancelled', 'no_show'));--> statement-breakpoint
ALTER TABLE "visits" ADD CONSTRAINT "visits_room_time_excl" EXCLUDE USING gist (
  "clinic_id" WITH =, "room_id" WITH =, visit_hold("scheduled_at", "ends_at", "buffer_before_minutes", "buffer_after_minutes") WITH &&
) WHERE ("deleted_at" IS NULL AND "room_id" IS NOT NULL AND "status" NOT IN ('cancelled', 'no_show'));
--> statement-breakpoint
-- The calendar's records are clinic records: their changes go to the event log. A visit's revision
-- moves with every change and says nothing by itself.
SELECT audit_attach('visits', 'visit', '{}', ARRAY['revision']);
--> statement-breakpoint
SELECT audit_attach('appointment_types', 'appointment_type');
--> statement-breakpoint
SELECT audit_attach('rooms', 'room');
--> statement-breakpoint
SELECT audit_attach('working_hours', 'working_hours');
--> statement-breakpoint
SELECT audit_attach('time_off', 'time_off');
--> statement-breakpoint
SELECT audit_attach('clinic_closures', 'clinic_closure');
--> statement-breakpoint
SELECT audit_attach('calendar_settings', 'calendar_settings');
--> statement-breakpoint
SELECT audit_attach('calendar_feeds', 'calendar_feed');
