DROP INDEX "patients_clinic_name_idx";--> statement-breakpoint
DROP INDEX "tutors_clinic_name_idx";--> statement-breakpoint
CREATE INDEX "patients_name_trgm_idx" ON "patients" USING gin ("name" gin_trgm_ops) WHERE "patients"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tutors_name_trgm_idx" ON "tutors" USING gin ("name" gin_trgm_ops) WHERE "tutors"."deleted_at" is null;