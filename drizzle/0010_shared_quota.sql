CREATE TABLE "quota_burst_seconds" (
	"principal_id" uuid NOT NULL,
	"second" bigint NOT NULL,
	"calls" integer NOT NULL,
	CONSTRAINT "quota_burst_seconds_principal_id_second_pk" PRIMARY KEY("principal_id","second")
);
--> statement-breakpoint
ALTER TABLE "quota_counters" ADD COLUMN "held" integer DEFAULT 0 NOT NULL;