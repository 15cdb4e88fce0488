CREATE TABLE "mcp_reports" (
	"id" uuid PRIMARY KEY NOT NULL,
	"clinic_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"name" text NOT NULL,
	"title" text NOT NULL,
	"description" text NOT NULL,
	"sql" text NOT NULL,
	"parameters" jsonb NOT NULL,
	"scope" text DEFAULT 'read' NOT NULL,
	"log_arguments" boolean DEFAULT false NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"checked_sql" text NOT NULL,
	"created_by" uuid
);
--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_reports_clinic_name_key" ON "mcp_reports" USING btree ("clinic_id","name");--> statement-breakpoint
CREATE INDEX "mcp_reports_clinic_created_idx" ON "mcp_reports" USING btree ("clinic_id","created_at","id");