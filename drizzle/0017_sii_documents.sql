CREATE TABLE "sii_cafs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"doc_type" integer NOT NULL,
	"range_from" integer NOT NULL,
	"range_to" integer NOT NULL,
	"next_folio" integer NOT NULL,
	"authorized_on" text NOT NULL,
	"expires_on" text,
	"environment" text NOT NULL,
	"caf_xml" text NOT NULL,
	"private_key_encrypted" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "sii_cafs_doc_type_check" CHECK ("sii_cafs"."doc_type" in (33, 39, 61)),
	CONSTRAINT "sii_cafs_range_check" CHECK ("sii_cafs"."range_from" >= 1 and "sii_cafs"."range_to" >= "sii_cafs"."range_from" and "sii_cafs"."next_folio" >= "sii_cafs"."range_from" and "sii_cafs"."next_folio" <= "sii_cafs"."range_to" + 1),
	CONSTRAINT "sii_cafs_environment_check" CHECK ("sii_cafs"."environment" in ('production', 'certification', 'test'))
);
--> statement-breakpoint
CREATE TABLE "sii_certificates" (
	"clinic_id" uuid NOT NULL,
	"subject" text NOT NULL,
	"holder_rut" text NOT NULL,
	"issuer" text NOT NULL,
	"valid_from" timestamp (3) with time zone NOT NULL,
	"valid_to" timestamp (3) with time zone NOT NULL,
	"certificate_pem" text NOT NULL,
	"private_key_encrypted" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "sii_certificates_clinic_id_pk" PRIMARY KEY("clinic_id")
);
--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "economic_activity_code" text;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "commune" text;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "sii_resolution_number" integer;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "sii_resolution_date" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "receiver_giro" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "receiver_address" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "receiver_commune" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "caf_id" uuid;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "environment" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "signed_xml" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "sent_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "track_id" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "sii_status" text;--> statement-breakpoint
CREATE INDEX "sii_cafs_clinic_type_idx" ON "sii_cafs" USING btree ("clinic_id","doc_type","range_from");