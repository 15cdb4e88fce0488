ALTER TABLE "clinics" ADD COLUMN "legal_name" text;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "rut" text;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "address" text;--> statement-breakpoint
ALTER TABLE "clinics" ADD COLUMN "giro" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "issuer_name" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "issuer_legal_name" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "issuer_rut" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "issuer_address" text;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "issuer_giro" text;