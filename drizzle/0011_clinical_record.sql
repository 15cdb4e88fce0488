CREATE TABLE "clinical_notes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"visit_id" uuid NOT NULL,
	"patient_id" uuid NOT NULL,
	"author_id" uuid NOT NULL,
	"subjective" text,
	"objective" text,
	"assessment" text,
	"plan" text,
	"diagnoses" text[] DEFAULT '{}'::text[] NOT NULL,
	"signed_at" timestamp (3) with time zone,
	"signed_by" uuid,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "clinical_notes_signed_check" CHECK (("clinical_notes"."signed_at" is null) = ("clinical_notes"."signed_by" is null)),
	CONSTRAINT "clinical_notes_signed_kept_check" CHECK ("clinical_notes"."signed_at" is null or "clinical_notes"."deleted_at" is null)
);
--> statement-breakpoint
CREATE TABLE "note_addenda" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"note_id" uuid NOT NULL,
	"patient_id" uuid NOT NULL,
	"author_id" uuid NOT NULL,
	"text" text NOT NULL,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "prescriptions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"patient_id" uuid NOT NULL,
	"visit_id" uuid,
	"prescribed_by" uuid NOT NULL,
	"drug" text NOT NULL,
	"dose" text NOT NULL,
	"route" text NOT NULL,
	"frequency" text NOT NULL,
	"duration_days" integer,
	"quantity" text,
	"instructions" text,
	"cancelled_at" timestamp (3) with time zone,
	"cancelled_by" uuid,
	"cancel_reason" text,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "prescriptions_cancel_check" CHECK (("prescriptions"."cancelled_at" is null) = ("prescriptions"."cancel_reason" is null))
);
--> statement-breakpoint
CREATE TABLE "vaccinations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"patient_id" uuid NOT NULL,
	"visit_id" uuid,
	"vaccine" text NOT NULL,
	"diseases" text[] DEFAULT '{}'::text[] NOT NULL,
	"lot" text,
	"lot_expires_on" date,
	"given_at" timestamp (3) with time zone,
	"given_by" uuid,
	"next_due_on" date,
	"reminder_status" text DEFAULT 'pending' NOT NULL,
	"reminder_updated_at" timestamp (3) with time zone,
	"due_closed_at" timestamp (3) with time zone,
	"due_closed_by" uuid,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "vaccinations_reminder_status_check" CHECK ("vaccinations"."reminder_status" in ('pending', 'contacted', 'booked', 'declined'))
);
--> statement-breakpoint
CREATE TABLE "vitals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"patient_id" uuid NOT NULL,
	"visit_id" uuid,
	"recorded_by" uuid,
	"measured_at" timestamp (3) with time zone NOT NULL,
	"weight_grams" integer,
	"temperature_dc" integer,
	"heart_rate_bpm" integer,
	"respiratory_rate_bpm" integer,
	"body_condition_score" integer,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "vitals_some_measure_check" CHECK (num_nonnulls("vitals"."weight_grams", "vitals"."temperature_dc", "vitals"."heart_rate_bpm", "vitals"."respiratory_rate_bpm", "vitals"."body_condition_score") > 0)
);
--> statement-breakpoint
CREATE INDEX "clinical_notes_clinic_visit_idx" ON "clinical_notes" USING btree ("clinic_id","visit_id","created_at","id") WHERE "clinical_notes"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "clinical_notes_clinic_patient_idx" ON "clinical_notes" USING btree ("clinic_id","patient_id","created_at","id") WHERE "clinical_notes"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "note_addenda_clinic_note_idx" ON "note_addenda" USING btree ("clinic_id","note_id","created_at","id") WHERE "note_addenda"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "prescriptions_clinic_patient_idx" ON "prescriptions" USING btree ("clinic_id","patient_id","created_at","id") WHERE "prescriptions"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "vaccinations_clinic_patient_idx" ON "vaccinations" USING btree ("clinic_id","patient_id","created_at","id") WHERE "vaccinations"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "vaccinations_clinic_due_idx" ON "vaccinations" USING btree ("clinic_id","next_due_on","id") WHERE "vaccinations"."deleted_at" is null and "vaccinations"."due_closed_at" is null and "vaccinations"."next_due_on" is not null;--> statement-breakpoint
CREATE INDEX "vitals_clinic_patient_idx" ON "vitals" USING btree ("clinic_id","patient_id","created_at","id") WHERE "vitals"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "vitals_clinic_patient_measured_idx" ON "vitals" USING btree ("clinic_id","patient_id","measured_at","id") WHERE "vitals"."deleted_at" is null;