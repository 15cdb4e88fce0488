CREATE TABLE "clinics" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"currency" text DEFAULT 'CLP' NOT NULL,
	"tax_rate_bps" integer DEFAULT 1900 NOT NULL,
	"plan" text DEFAULT 'standard' NOT NULL,
	"burst_per_minute" integer,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "clinics_plan_check" CHECK ("clinics"."plan" in ('standard', 'pro', 'enterprise'))
);
--> statement-breakpoint
CREATE TABLE "refresh_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"family_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"clinic_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "users_role_check" CHECK ("users"."role" in ('owner', 'vet', 'staff'))
);
--> statement-breakpoint
CREATE TABLE "alerts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"patient_id" uuid,
	"kind" text NOT NULL,
	"message" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"due_date" date,
	"resolved_at" timestamp (3) with time zone,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "alerts_kind_check" CHECK ("alerts"."kind" in ('vaccine_due', 'follow_up', 'allergy', 'overdue_invoice', 'custom')),
	CONSTRAINT "alerts_status_check" CHECK ("alerts"."status" in ('active', 'resolved'))
);
--> statement-breakpoint
CREATE TABLE "patients" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"tutor_id" uuid NOT NULL,
	"name" text NOT NULL,
	"species" text NOT NULL,
	"breed" text,
	"sex" text,
	"birth_date" date,
	"weight_grams" integer,
	"microchip" text,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "tutors" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"phone" text,
	"national_id" text,
	"address" text,
	"notes" text,
	"deleted_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "visits" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"patient_id" uuid NOT NULL,
	"vet_id" uuid,
	"status" text DEFAULT 'scheduled' NOT NULL,
	"scheduled_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"reason" text,
	"diagnosis" text,
	"notes" text,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "visits_status_check" CHECK ("visits"."status" in ('scheduled', 'in_progress', 'completed', 'cancelled', 'no_show'))
);
--> statement-breakpoint
CREATE TABLE "folio_counters" (
	"clinic_id" uuid NOT NULL,
	"doc_type" integer NOT NULL,
	"last_folio" integer NOT NULL,
	CONSTRAINT "folio_counters_clinic_id_doc_type_pk" PRIMARY KEY("clinic_id","doc_type")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"clinic_id" uuid NOT NULL,
	"key" uuid NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_clinic_id_key_pk" PRIMARY KEY("clinic_id","key")
);
--> statement-breakpoint
CREATE TABLE "invoice_items" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"invoice_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"description" text NOT NULL,
	"quantity" integer NOT NULL,
	"unit_price" bigint NOT NULL,
	"total_amount" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "invoices" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"tutor_id" uuid NOT NULL,
	"visit_id" uuid,
	"status" text DEFAULT 'draft' NOT NULL,
	"currency" text NOT NULL,
	"net_amount" bigint NOT NULL,
	"tax_amount" bigint NOT NULL,
	"total_amount" bigint NOT NULL,
	"paid_amount" bigint DEFAULT 0 NOT NULL,
	"emitted_at" timestamp (3) with time zone,
	"paid_at" timestamp (3) with time zone,
	"voided_at" timestamp (3) with time zone,
	"notes" text,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "invoices_status_check" CHECK ("invoices"."status" in ('draft', 'emitted', 'paid', 'void')),
	CONSTRAINT "invoices_paid_within_total" CHECK ("invoices"."paid_amount" >= 0 and "invoices"."paid_amount" <= "invoices"."total_amount")
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"invoice_id" uuid NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"method" text NOT NULL,
	"reference" text,
	"paid_at" timestamp (3) with time zone NOT NULL,
	"refunded_amount" bigint DEFAULT 0 NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "payments_amount_positive" CHECK ("payments"."amount" > 0),
	CONSTRAINT "payments_refund_within_amount" CHECK ("payments"."refunded_amount" >= 0 and "payments"."refunded_amount" <= "payments"."amount")
);
--> statement-breakpoint
CREATE TABLE "refunds" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"payment_id" uuid NOT NULL,
	"invoice_id" uuid NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text NOT NULL,
	"reason" text,
	"refunded_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "refunds_amount_positive" CHECK ("refunds"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "tax_documents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"invoice_id" uuid NOT NULL,
	"doc_type" integer NOT NULL,
	"folio" integer NOT NULL,
	"receiver_rut" text,
	"receiver_name" text,
	"referenced_document_id" uuid,
	"currency" text NOT NULL,
	"net_amount" bigint NOT NULL,
	"tax_amount" bigint NOT NULL,
	"total_amount" bigint NOT NULL,
	"issued_at" timestamp (3) with time zone NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	CONSTRAINT "tax_documents_doc_type_check" CHECK ("tax_documents"."doc_type" in (33, 39, 61))
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"scopes" text[] NOT NULL,
	"rate_limit_per_day" integer DEFAULT 1000 NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	"revoked_at" timestamp (3) with time zone,
	"created_by" uuid,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_usage_log" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"api_key_id" uuid NOT NULL,
	"tool" text NOT NULL,
	"status_code" integer NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"sql_text" text,
	"rows_returned" integer,
	"duration_ms" integer NOT NULL,
	"request_id" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "mcp_usage_log_outcome_check" CHECK ("mcp_usage_log"."outcome" in ('ok', 'blocked', 'error', 'denied', 'rate_limited'))
);
--> statement-breakpoint
CREATE TABLE "quota_counters" (
	"api_key_id" uuid NOT NULL,
	"day" date NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "quota_counters_api_key_id_day_pk" PRIMARY KEY("api_key_id","day")
);
--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_clinic_id_clinics_id_fk" FOREIGN KEY ("clinic_id") REFERENCES "public"."clinics"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_items" ADD CONSTRAINT "invoice_items_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "refresh_tokens_hash_key" ON "refresh_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "refresh_tokens_family_idx" ON "refresh_tokens" USING btree ("family_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_live_key" ON "users" USING btree ("email") WHERE "users"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "users_clinic_created_idx" ON "users" USING btree ("clinic_id","created_at","id");--> statement-breakpoint
CREATE INDEX "alerts_clinic_created_idx" ON "alerts" USING btree ("clinic_id","created_at","id") WHERE "alerts"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "alerts_clinic_status_idx" ON "alerts" USING btree ("clinic_id","status","created_at","id") WHERE "alerts"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "patients_clinic_created_idx" ON "patients" USING btree ("clinic_id","created_at","id") WHERE "patients"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "patients_clinic_tutor_idx" ON "patients" USING btree ("clinic_id","tutor_id","created_at","id") WHERE "patients"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "patients_clinic_name_idx" ON "patients" USING btree ("clinic_id",lower("name")) WHERE "patients"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tutors_clinic_created_idx" ON "tutors" USING btree ("clinic_id","created_at","id") WHERE "tutors"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tutors_clinic_name_idx" ON "tutors" USING btree ("clinic_id",lower("name")) WHERE "tutors"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_clinic_created_idx" ON "visits" USING btree ("clinic_id","created_at","id") WHERE "visits"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_clinic_scheduled_idx" ON "visits" USING btree ("clinic_id","scheduled_at","id") WHERE "visits"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_clinic_patient_idx" ON "visits" USING btree ("clinic_id","patient_id","created_at","id") WHERE "visits"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "visits_clinic_vet_scheduled_idx" ON "visits" USING btree ("clinic_id","vet_id","scheduled_at","id") WHERE "visits"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "invoice_items_invoice_idx" ON "invoice_items" USING btree ("invoice_id","position");--> statement-breakpoint
CREATE INDEX "invoices_clinic_created_idx" ON "invoices" USING btree ("clinic_id","created_at","id") WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "invoices_clinic_emitted_idx" ON "invoices" USING btree ("clinic_id","emitted_at","id") WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "invoices_clinic_tutor_idx" ON "invoices" USING btree ("clinic_id","tutor_id","created_at","id") WHERE "invoices"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "payments_clinic_created_idx" ON "payments" USING btree ("clinic_id","created_at","id") WHERE "payments"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "payments_clinic_paid_idx" ON "payments" USING btree ("clinic_id","paid_at") WHERE "payments"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "payments_invoice_idx" ON "payments" USING btree ("invoice_id");--> statement-breakpoint
CREATE INDEX "refunds_clinic_created_idx" ON "refunds" USING btree ("clinic_id","created_at","id") WHERE "refunds"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "refunds_clinic_refunded_idx" ON "refunds" USING btree ("clinic_id","refunded_at") WHERE "refunds"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "refunds_payment_idx" ON "refunds" USING btree ("payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tax_documents_folio_key" ON "tax_documents" USING btree ("clinic_id","doc_type","folio");--> statement-breakpoint
CREATE UNIQUE INDEX "tax_documents_one_sale_doc_per_invoice" ON "tax_documents" USING btree ("invoice_id") WHERE "tax_documents"."doc_type" in (33, 39);--> statement-breakpoint
CREATE INDEX "tax_documents_clinic_created_idx" ON "tax_documents" USING btree ("clinic_id","created_at","id") WHERE "tax_documents"."deleted_at" is null;--> statement-breakpoint
CREATE INDEX "tax_documents_clinic_issued_idx" ON "tax_documents" USING btree ("clinic_id","issued_at","id") WHERE "tax_documents"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_clinic_created_idx" ON "api_keys" USING btree ("clinic_id","created_at","id");--> statement-breakpoint
CREATE INDEX "mcp_usage_log_clinic_created_idx" ON "mcp_usage_log" USING btree ("clinic_id","created_at","id");--> statement-breakpoint
CREATE INDEX "mcp_usage_log_key_created_idx" ON "mcp_usage_log" USING btree ("api_key_id","created_at");