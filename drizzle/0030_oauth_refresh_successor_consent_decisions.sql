CREATE TABLE "oauth_consent_decisions" (
	"request_id" text PRIMARY KEY NOT NULL,
	"decided_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oauth_tokens" ADD COLUMN "successor" text;