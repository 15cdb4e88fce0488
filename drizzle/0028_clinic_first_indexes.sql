-- Every everyday query of a clinic is served by an index that starts with the clinic: delta sync
-- (clinic_id, updated_at, id) over live and deleted rows; per-parent lists and their delta sync
-- over live and deleted rows; name search keyed by the clinic (btree_gin lets a GIN index hold
-- the clinic beside the trigrams); the timeline's invoice branch; the audit's action filter.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
DROP INDEX "patients_name_folded_trgm_idx";--> statement-breakpoint
DROP INDEX "tutors_name_folded_trgm_idx";--> statement-breakpoint
DROP INDEX "visits_clinic_patient_idx";--> statement-breakpoint
DROP INDEX "clinical_notes_clinic_visit_idx";--> statement-breakpoint
DROP INDEX "prescriptions_clinic_patient_idx";--> statement-breakpoint
DROP INDEX "vaccinations_clinic_patient_idx";--> statement-breakpoint
DROP INDEX "vitals_clinic_patient_idx";--> statement-breakpoint
DROP INDEX "webhook_endpoints_clinic_created_idx";--> statement-breakpoint
CREATE INDEX "alerts_clinic_updated_idx" ON "alerts" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "patients_clinic_updated_idx" ON "patients" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "patients_clinic_name_trgm_idx" ON "patients" USING gin ("clinic_id",fold_name("name") gin_trgm_ops) WITH (fastupdate=false) WHERE "patients"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tutors_clinic_updated_idx" ON "tutors" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "tutors_clinic_name_trgm_idx" ON "tutors" USING gin ("clinic_id",fold_name("name") gin_trgm_ops) WITH (fastupdate=false) WHERE "tutors"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_clinic_updated_idx" ON "visits" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "invoices_clinic_visit_idx" ON "invoices" USING btree ("clinic_id","visit_id") WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "invoices_clinic_updated_idx" ON "invoices" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "payments_clinic_updated_idx" ON "payments" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "refunds_clinic_updated_idx" ON "refunds" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "tax_documents_clinic_updated_idx" ON "tax_documents" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "events_clinic_action_idx" ON "events" USING btree ("clinic_id","action","occurred_at","seq");--> statement-breakpoint
CREATE INDEX "visits_clinic_patient_idx" ON "visits" USING btree ("clinic_id","patient_id","created_at","id");--> statement-breakpoint
CREATE INDEX "clinical_notes_clinic_visit_idx" ON "clinical_notes" USING btree ("clinic_id","visit_id","created_at","id");--> statement-breakpoint
CREATE INDEX "prescriptions_clinic_patient_idx" ON "prescriptions" USING btree ("clinic_id","patient_id","created_at","id");--> statement-breakpoint
CREATE INDEX "vaccinations_clinic_patient_idx" ON "vaccinations" USING btree ("clinic_id","patient_id","created_at","id");--> statement-breakpoint
CREATE INDEX "vitals_clinic_patient_idx" ON "vitals" USING btree ("clinic_id","patient_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_clinic_created_idx" ON "webhook_endpoints" USING btree ("clinic_id","created_at","id");
