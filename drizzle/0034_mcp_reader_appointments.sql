-- query_database, defence in depth: the clinic views run with the reader's own rights
-- (security_invoker) instead of as security barriers, so PostgreSQL plans them as part of the
-- query (indexes for ORDER BY … LIMIT, join order, statistics). The reader may SELECT only the
-- columns the views show, and row-level security shows it only the live rows of the clinic in
-- app.clinic_id, before any condition of the query runs. The clinic is read once per statement
-- (a scalar subquery, which PostgreSQL runs as an InitPlan), not once per row scanned.
DO $$
BEGIN
  IF current_setting('server_version_num')::int < 150000 THEN
    RAISE EXCEPTION 'vet-clinic-service needs PostgreSQL 15 or newer; this server runs %', current_setting('server_version');
  END IF;
END $$;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.tutors WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, name, email, phone, national_id, address, notes, created_at, updated_at FROM public.tutors
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.tutors TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, name, email, phone, national_id, address, notes, created_at, updated_at) ON public.tutors TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.tutors ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.tutors;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.tutors FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.patients WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, tutor_id, name, species, breed, sex, birth_date, weight_grams, microchip, created_at, updated_at FROM public.patients
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.patients TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, tutor_id, name, species, breed, sex, birth_date, weight_grams, microchip, created_at, updated_at) ON public.patients TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.patients ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.patients;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.patients FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.visits WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, vet_id, status, scheduled_at, started_at, completed_at, reason, diagnosis, notes, created_at, updated_at FROM public.visits
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.visits TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, vet_id, status, scheduled_at, started_at, completed_at, reason, diagnosis, notes, created_at, updated_at) ON public.visits TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.visits ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.visits;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.visits FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.alerts WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, kind, message, status, due_date, resolved_at, created_at, updated_at FROM public.alerts
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.alerts TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, kind, message, status, due_date, resolved_at, created_at, updated_at) ON public.alerts TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.alerts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.alerts;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.alerts FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.invoices WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, tutor_id, visit_id, status, currency, net_amount, tax_amount, total_amount, paid_amount, emitted_at, paid_at, voided_at, created_at, updated_at FROM public.invoices
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.invoices TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, tutor_id, visit_id, status, currency, net_amount, tax_amount, total_amount, paid_amount, emitted_at, paid_at, voided_at, created_at, updated_at) ON public.invoices TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.invoices ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.invoices;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.invoices FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.invoice_items WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, invoice_id, description, quantity, unit_price, total_amount FROM public.invoice_items
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.invoice_items TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, invoice_id, description, quantity, unit_price, total_amount) ON public.invoice_items TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.invoice_items ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.invoice_items;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.invoice_items FOR SELECT TO vet_mcp_reader USING (clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.payments WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, invoice_id, amount, currency, method, paid_at, refunded_amount, created_at, updated_at FROM public.payments
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.payments TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, invoice_id, amount, currency, method, paid_at, refunded_amount, created_at, updated_at) ON public.payments TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.payments ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.payments;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.payments FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.refunds WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, payment_id, invoice_id, amount, currency, reason, refunded_at, created_at, updated_at FROM public.refunds
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.refunds TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, payment_id, invoice_id, amount, currency, reason, refunded_at, created_at, updated_at) ON public.refunds TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.refunds ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.refunds;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.refunds FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
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
CREATE OR REPLACE VIEW mcp_read.clinical_notes WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, visit_id, patient_id, author_id, subjective, objective, assessment, plan, diagnoses, signed_at, signed_by, created_at, updated_at FROM public.clinical_notes
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid) AND signed_at IS NOT NULL;
--> statement-breakpoint
GRANT SELECT ON mcp_read.clinical_notes TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, visit_id, patient_id, author_id, subjective, objective, assessment, plan, diagnoses, signed_at, signed_by, created_at, updated_at) ON public.clinical_notes TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.clinical_notes ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.clinical_notes;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.clinical_notes FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND signed_at IS NOT NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.note_addenda WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, note_id, patient_id, author_id, text, created_at, updated_at FROM public.note_addenda
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.note_addenda TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, note_id, patient_id, author_id, text, created_at, updated_at) ON public.note_addenda TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.note_addenda ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.note_addenda;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.note_addenda FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.vitals WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, visit_id, recorded_by, measured_at, weight_grams, temperature_dc, heart_rate_bpm, respiratory_rate_bpm, body_condition_score, created_at, updated_at FROM public.vitals
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.vitals TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, visit_id, recorded_by, measured_at, weight_grams, temperature_dc, heart_rate_bpm, respiratory_rate_bpm, body_condition_score, created_at, updated_at) ON public.vitals TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.vitals ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.vitals;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.vitals FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.vaccinations WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, visit_id, vaccine, diseases, lot, lot_expires_on, given_at, given_by, next_due_on, reminder_status, due_closed_at, created_at, updated_at FROM public.vaccinations
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.vaccinations TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, visit_id, vaccine, diseases, lot, lot_expires_on, given_at, given_by, next_due_on, reminder_status, due_closed_at, created_at, updated_at) ON public.vaccinations TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.vaccinations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.vaccinations;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.vaccinations FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.prescriptions WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, visit_id, prescribed_by, drug, dose, route, frequency, duration_days, quantity, instructions, cancelled_at, cancel_reason, created_at, updated_at FROM public.prescriptions
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.prescriptions TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, visit_id, prescribed_by, drug, dose, route, frequency, duration_days, quantity, instructions, cancelled_at, cancel_reason, created_at, updated_at) ON public.prescriptions TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.prescriptions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.prescriptions;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.prescriptions FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.reminder_messages WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, rule_id, kind, subject_id, patient_id, tutor_id, channel, due_at, send_at, status, suppressed_reason, attempts, last_error, sent_at, delivered_at, read_at, created_at, updated_at FROM public.reminder_messages
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.reminder_messages TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, rule_id, kind, subject_id, patient_id, tutor_id, channel, due_at, send_at, status, suppressed_reason, attempts, last_error, sent_at, delivered_at, read_at, created_at, updated_at) ON public.reminder_messages TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.reminder_messages ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.reminder_messages;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.reminder_messages FOR SELECT TO vet_mcp_reader USING (true AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.consent_records WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, tutor_id, channel, purpose, granted, source, recorded_at, recorded_by, created_at, updated_at FROM public.consent_records
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.consent_records TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, tutor_id, channel, purpose, granted, source, recorded_at, recorded_by, created_at, updated_at) ON public.consent_records TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.consent_records ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.consent_records;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.consent_records FOR SELECT TO vet_mcp_reader USING (true AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.tutor_consents WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, tutor_id, channel, purpose, status, source, recorded_at, created_at, updated_at FROM public.tutor_consents
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.tutor_consents TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, tutor_id, channel, purpose, status, source, recorded_at, created_at, updated_at) ON public.tutor_consents TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.tutor_consents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.tutor_consents;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.tutor_consents FOR SELECT TO vet_mcp_reader USING (true AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.appointments WITH (security_barrier = false, security_invoker = true) AS
  SELECT v.clinic_id, v.id, v.patient_id, v.vet_id, v.room_id, v.appointment_type_id, t.name AS appointment_type, v.status, v.scheduled_at, v.ends_at, v.confirmed_at, v.created_at, v.updated_at
  FROM public.visits v LEFT JOIN public.appointment_types t ON t.clinic_id = v.clinic_id AND t.id = v.appointment_type_id
  WHERE v.clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT ON mcp_read.appointments TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, vet_id, room_id, appointment_type_id, status, scheduled_at, ends_at, confirmed_at, created_at, updated_at) ON public.visits TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, name) ON public.appointment_types TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.appointment_types ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.appointment_types;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.appointment_types FOR SELECT TO vet_mcp_reader USING (clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
