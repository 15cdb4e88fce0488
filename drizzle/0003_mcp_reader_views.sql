-- query_database, defence in depth: a role that can only SELECT curated per-clinic views.
-- Each view shows the live rows of the clinic in current_setting('app.clinic_id') (set by the
-- executor inside its READ ONLY transaction), without secret columns. The reader has no
-- privilege on any base table, and row-level security on the base tables pins the same
-- clinic for it should it ever be granted one.
CREATE SCHEMA IF NOT EXISTS mcp_read;
--> statement-breakpoint
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'vet_mcp_reader') THEN
    CREATE ROLE vet_mcp_reader NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- another database of the same cluster created it at the same moment
END $$;
--> statement-breakpoint
DO $$
BEGIN
  IF NOT pg_has_role(current_user, 'vet_mcp_reader', 'MEMBER') THEN
    EXECUTE format('GRANT vet_mcp_reader TO %I', current_user);
  END IF;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'could not grant vet_mcp_reader to %: %', current_user, SQLERRM;
END $$;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.tutors WITH (security_barrier = true) AS
  SELECT clinic_id, id, name, email, phone, national_id, address, notes, created_at, updated_at FROM public.tutors
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.patients WITH (security_barrier = true) AS
  SELECT clinic_id, id, tutor_id, name, species, breed, sex, birth_date, weight_grams, microchip, created_at, updated_at FROM public.patients
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.visits WITH (security_barrier = true) AS
  SELECT clinic_id, id, patient_id, vet_id, status, scheduled_at, started_at, completed_at, reason, diagnosis, notes, created_at, updated_at FROM public.visits
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.alerts WITH (security_barrier = true) AS
  SELECT clinic_id, id, patient_id, kind, message, status, due_date, resolved_at, created_at, updated_at FROM public.alerts
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.invoices WITH (security_barrier = true) AS
  SELECT clinic_id, id, tutor_id, visit_id, status, currency, net_amount, tax_amount, total_amount, paid_amount, emitted_at, paid_at, voided_at, created_at, updated_at FROM public.invoices
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.invoice_items WITH (security_barrier = true) AS
  SELECT clinic_id, id, invoice_id, description, quantity, unit_price, total_amount FROM public.invoice_items
  WHERE clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.payments WITH (security_barrier = true) AS
  SELECT clinic_id, id, invoice_id, amount, currency, method, paid_at, refunded_amount, created_at, updated_at FROM public.payments
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.refunds WITH (security_barrier = true) AS
  SELECT clinic_id, id, payment_id, invoice_id, amount, currency, reason, refunded_at, created_at, updated_at FROM public.refunds
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.tax_documents WITH (security_barrier = true) AS
  SELECT clinic_id, id, invoice_id, doc_type, folio, receiver_rut, receiver_name, referenced_document_id, currency, net_amount, tax_amount, total_amount, issued_at, created_at, updated_at FROM public.tax_documents
  WHERE deleted_at IS NULL AND clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid;
--> statement-breakpoint
GRANT USAGE ON SCHEMA mcp_read TO vet_mcp_reader;
--> statement-breakpoint
GRANT SELECT ON ALL TABLES IN SCHEMA mcp_read TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.tutors ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.tutors FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.patients ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.patients FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.visits ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.visits FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.alerts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.alerts FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.invoices ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.invoices FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.invoice_items ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.invoice_items FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.payments ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.payments FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.refunds ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.refunds FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
ALTER TABLE public.tax_documents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.tax_documents FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
-- Best effort (needs the functions' owner, i.e. a superuser): the reader must not change the
-- tenant setting, sleep, lock, notify or create large objects (which PostgreSQL allows even
-- in a READ ONLY transaction) even if a statement slipped past the guard.
DO $$
DECLARE fn text;
BEGIN
  FOREACH fn IN ARRAY ARRAY['set_config(text,text,boolean)', 'pg_sleep(double precision)', 'pg_sleep_for(interval)', 'pg_sleep_until(timestamp with time zone)', 'pg_advisory_lock(bigint)', 'pg_advisory_lock_shared(bigint)', 'pg_advisory_xact_lock(bigint)', 'pg_try_advisory_lock(bigint)', 'pg_notify(text,text)', 'lo_create(oid)', 'lo_creat(integer)', 'lo_from_bytea(oid,bytea)', 'lo_put(oid,bigint,bytea)', 'lo_unlink(oid)', 'lo_open(oid,integer)', 'lowrite(integer,bytea)', 'lo_truncate(integer,integer)', 'lo_truncate64(integer,bigint)'] LOOP
    BEGIN
      EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', fn, current_user);
    EXCEPTION WHEN OTHERS THEN
      RAISE NOTICE 'could not restrict %: %', fn, SQLERRM;
    END;
  END LOOP;
END $$;
