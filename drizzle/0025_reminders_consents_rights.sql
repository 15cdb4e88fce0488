CREATE TABLE "consent_records" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"tutor_id" uuid NOT NULL,
	"channel" text NOT NULL,
	"purpose" text NOT NULL,
	"granted" boolean NOT NULL,
	"source" text NOT NULL,
	"evidence" text,
	"recorded_at" timestamp (3) with time zone NOT NULL,
	"recorded_by" uuid,
	CONSTRAINT "consent_records_channel_check" CHECK ("consent_records"."channel" in ('email', 'whatsapp')),
	CONSTRAINT "consent_records_purpose_check" CHECK ("consent_records"."purpose" in ('reminders', 'marketing')),
	CONSTRAINT "consent_records_source_check" CHECK ("consent_records"."source" in ('console', 'booking', 'reply', 'link', 'import'))
);
--> statement-breakpoint
CREATE TABLE "reminder_messages" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"rule_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"subject_id" uuid NOT NULL,
	"patient_id" uuid NOT NULL,
	"tutor_id" uuid NOT NULL,
	"channel" text NOT NULL,
	"due_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"send_at" timestamp (3) with time zone NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"suppressed_reason" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"claimed_until" timestamp (3) with time zone,
	"recipient" text,
	"provider_message_id" text,
	"last_error" text,
	"sent_at" timestamp (3) with time zone,
	"delivered_at" timestamp (3) with time zone,
	"read_at" timestamp (3) with time zone,
	CONSTRAINT "reminder_messages_status_check" CHECK ("reminder_messages"."status" in ('queued', 'sent', 'delivered', 'read', 'failed', 'suppressed'))
);
--> statement-breakpoint
CREATE TABLE "reminder_rules" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"offset" text NOT NULL,
	"offset_minutes" integer NOT NULL,
	"channels" text[] NOT NULL,
	"email_subject" text,
	"email_text" text,
	"whatsapp_template" text,
	"whatsapp_language" text,
	"whatsapp_parameters" text[] DEFAULT '{}'::text[] NOT NULL,
	"quiet_start" text DEFAULT '20:00' NOT NULL,
	"quiet_end" text DEFAULT '09:00' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "reminder_rules_kind_check" CHECK ("reminder_rules"."kind" in ('vaccination_due', 'appointment', 'follow_up'))
);
--> statement-breakpoint
CREATE TABLE "tutor_consents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"tutor_id" uuid NOT NULL,
	"channel" text NOT NULL,
	"purpose" text NOT NULL,
	"status" text NOT NULL,
	"source" text NOT NULL,
	"recorded_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "tutor_consents_status_check" CHECK ("tutor_consents"."status" in ('granted', 'withdrawn'))
);
--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "language" text DEFAULT 'es' NOT NULL;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "cancellation_window_hours" integer DEFAULT 24 NOT NULL;--> statement-breakpoint
ALTER TABLE "patients" ADD COLUMN "deceased_on" date;--> statement-breakpoint
ALTER TABLE "tutors" ADD COLUMN "blocked_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "visits" ADD COLUMN "confirmed_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "consent_records_tutor_idx" ON "consent_records" USING btree ("clinic_id","tutor_id","recorded_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "reminder_messages_once_key" ON "reminder_messages" USING btree ("clinic_id","rule_id","subject_id","due_at","channel");--> statement-breakpoint
CREATE INDEX "reminder_messages_due_idx" ON "reminder_messages" USING btree ("send_at") WHERE "reminder_messages"."status" = 'queued';--> statement-breakpoint
CREATE INDEX "reminder_messages_clinic_created_idx" ON "reminder_messages" USING btree ("clinic_id","created_at","id");--> statement-breakpoint
CREATE INDEX "reminder_messages_patient_idx" ON "reminder_messages" USING btree ("clinic_id","patient_id","created_at");--> statement-breakpoint
CREATE INDEX "reminder_messages_provider_idx" ON "reminder_messages" USING btree ("provider_message_id");--> statement-breakpoint
CREATE INDEX "reminder_rules_clinic_created_idx" ON "reminder_rules" USING btree ("clinic_id","created_at","id") WHERE "reminder_rules"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "tutor_consents_key" ON "tutor_consents" USING btree ("tutor_id","channel","purpose");