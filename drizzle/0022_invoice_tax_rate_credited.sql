-- Invoices record the IVA rate they were computed with (backfilled from their clinic's current
-- rate, the one they were made with unless it changed since) and what notas de crédito took off
-- them; folios are unique within one environment (production beside certification and test).
-- The backfill is not an event of anyone's: the audit trigger is off for it (app.audit = 'off'),
-- and each update touches only rows it changes, so running it again writes nothing.
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_paid_within_total";--> statement-breakpoint
DROP INDEX "tax_documents_folio_key";--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "tax_rate_bps" integer DEFAULT 1900 NOT NULL;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "credited_amount" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "tax_documents" ADD COLUMN "reference_code" integer;--> statement-breakpoint
DO $$
DECLARE
  previous text := coalesce(current_setting('app.audit', true), '');
BEGIN
  PERFORM set_config('app.audit', 'off', false);
  UPDATE "invoices" SET "tax_rate_bps" = c."tax_rate_bps" FROM "clinics" c WHERE c."id" = "invoices"."clinic_id" AND "invoices"."tax_rate_bps" <> c."tax_rate_bps";
  UPDATE "invoices" SET "credited_amount" = "total_amount" - "paid_amount" WHERE "status" = 'credited' AND "credited_amount" <> "total_amount" - "paid_amount";
  UPDATE "tax_documents" SET "reference_code" = 1 WHERE "doc_type" = 61 AND "reference_code" IS NULL;
  -- Back to what the session had (a restore that replays the migrations keeps its own 'off').
  PERFORM set_config('app.audit', previous, false);
END $$;--> statement-breakpoint
CREATE UNIQUE INDEX "tax_documents_folio_key" ON "tax_documents" USING btree ("clinic_id","environment","doc_type","folio");--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_paid_within_total" CHECK ("invoices"."paid_amount" >= 0 and "invoices"."credited_amount" >= 0 and "invoices"."paid_amount" + "invoices"."credited_amount" <= "invoices"."total_amount");
