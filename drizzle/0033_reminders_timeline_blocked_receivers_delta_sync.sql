-- Delta sync (updated_since) on the reminder outbox, the reminder rules, time off and closures:
-- each list reads its clinic's changes through (clinic_id, updated_at, id); the outbox's list
-- filtered by tutor reads through (clinic_id, tutor_id, created_at). A tax document remembers
-- when its receiver's data was erased, so every read path shows it blocked. A reminder records
-- when its latest attempt went to the provider (before the call), so a message reclaimed after a
-- kill is known to be in doubt.
ALTER TABLE "tax_documents" ADD COLUMN "receiver_blocked_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "reminder_messages" ADD COLUMN "sending_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE INDEX "clinic_closures_clinic_updated_idx" ON "clinic_closures" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "time_off_clinic_updated_idx" ON "time_off" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "reminder_messages_clinic_updated_idx" ON "reminder_messages" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "reminder_messages_tutor_idx" ON "reminder_messages" USING btree ("clinic_id","tutor_id","created_at");--> statement-breakpoint
CREATE INDEX "reminder_rules_clinic_updated_idx" ON "reminder_rules" USING btree ("clinic_id","updated_at","id");--> statement-breakpoint
-- The patient's timeline also shows the reminders about the patient that left or were stopped
-- (sent, delivered, read, failed, suppressed), at the moment they left or ended; queued ones
-- are not history yet. Each branch is read by the patient's clinic-first index.
CREATE OR REPLACE VIEW public.patient_timeline AS
  SELECT clinic_id, patient_id, coalesce(completed_at, started_at, scheduled_at) AS at, 'visit'::text AS kind, id FROM public.visits WHERE deleted_at IS NULL
  UNION ALL
  SELECT clinic_id, patient_id, signed_at, 'note', id FROM public.clinical_notes WHERE deleted_at IS NULL AND signed_at IS NOT NULL
  UNION ALL
  SELECT clinic_id, patient_id, created_at, 'addendum', id FROM public.note_addenda WHERE deleted_at IS NULL
  UNION ALL
  SELECT clinic_id, patient_id, measured_at, 'vitals', id FROM public.vitals WHERE deleted_at IS NULL
  UNION ALL
  SELECT clinic_id, patient_id, coalesce(given_at, created_at), 'vaccination', id FROM public.vaccinations WHERE deleted_at IS NULL
  UNION ALL
  SELECT clinic_id, patient_id, created_at, 'prescription', id FROM public.prescriptions WHERE deleted_at IS NULL
  UNION ALL
  SELECT i.clinic_id, v.patient_id, coalesce(i.emitted_at, i.created_at), 'invoice', i.id FROM public.invoices i
    JOIN public.visits v ON v.id = i.visit_id AND v.clinic_id = i.clinic_id
    WHERE i.deleted_at IS NULL
  UNION ALL
  SELECT clinic_id, patient_id, coalesce(sent_at, updated_at), 'reminder', id FROM public.reminder_messages WHERE status <> 'queued';
--> statement-breakpoint
-- query_database: an erased receiver's fields of tax documents read "dato bloqueado" (the view
-- as scripts/generate-reader-migration.ts prints it for tax_documents).
CREATE OR REPLACE VIEW mcp_read.tax_documents WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, invoice_id, doc_type, folio, CASE WHEN receiver_blocked_at IS NULL OR receiver_rut IS NULL THEN receiver_rut ELSE 'dato bloqueado' END AS receiver_rut, CASE WHEN receiver_blocked_at IS NULL OR receiver_name IS NULL THEN receiver_name ELSE 'dato bloqueado' END AS receiver_name, referenced_document_id, currency, net_amount, tax_amount, total_amount, issued_at, created_at, updated_at, environment, CASE WHEN receiver_blocked_at IS NULL OR receiver_giro IS NULL THEN receiver_giro ELSE 'dato bloqueado' END AS receiver_giro, CASE WHEN receiver_blocked_at IS NULL OR receiver_address IS NULL THEN receiver_address ELSE 'dato bloqueado' END AS receiver_address, CASE WHEN receiver_blocked_at IS NULL OR receiver_commune IS NULL THEN receiver_commune ELSE 'dato bloqueado' END AS receiver_commune, receiver_blocked_at FROM public.tax_documents
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.tax_documents TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, invoice_id, doc_type, folio, receiver_rut, receiver_name, referenced_document_id, currency, net_amount, tax_amount, total_amount, issued_at, created_at, updated_at, environment, receiver_giro, receiver_address, receiver_commune, receiver_blocked_at) ON public.tax_documents TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.tax_documents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.tax_documents;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.tax_documents FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
-- Handing a message to the provider (sending_at) is the dispatcher's bookkeeping, as its claim is,
-- not a change of the message: no event.
SELECT audit_attach('reminder_messages', 'reminder', '{"sent": "sent", "failed": "failed", "suppressed": "suppressed", "delivered": "delivered", "read": "read"}', ARRAY['claimed_until', 'attempts', 'send_at', 'last_error', 'sending_at']);
