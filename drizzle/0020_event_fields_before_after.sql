ALTER TABLE "events" ADD COLUMN "fields_before" jsonb;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "fields_after" jsonb;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "redacted_fields" text[];