-- The clinical record, part 2 (hand-written): the patient's timeline, the rules that keep the
-- record from being lost or rewritten (enforced by the database too, whoever writes), the
-- assistant's read-only views (signed notes and addenda only, never drafts) and the move of the
-- vaccine reminders kept as alerts into due items of the vaccinations.
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
    WHERE i.deleted_at IS NULL;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.clinical_record_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The one exception: erasing a whole clinic (the demo clinic's --replace) names it first.
  IF current_setting('app.erasing_clinic', true) = OLD.clinic_id::text THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'the clinical record is never deleted (table %)', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_record_kept ON public.clinical_notes;
--> statement-breakpoint
CREATE TRIGGER clinical_record_kept BEFORE DELETE ON public.clinical_notes FOR EACH ROW EXECUTE FUNCTION public.clinical_record_kept();
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_record_kept ON public.note_addenda;
--> statement-breakpoint
CREATE TRIGGER clinical_record_kept BEFORE DELETE ON public.note_addenda FOR EACH ROW EXECUTE FUNCTION public.clinical_record_kept();
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_record_kept ON public.vitals;
--> statement-breakpoint
CREATE TRIGGER clinical_record_kept BEFORE DELETE ON public.vitals FOR EACH ROW EXECUTE FUNCTION public.clinical_record_kept();
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_record_kept ON public.vaccinations;
--> statement-breakpoint
CREATE TRIGGER clinical_record_kept BEFORE DELETE ON public.vaccinations FOR EACH ROW EXECUTE FUNCTION public.clinical_record_kept();
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_record_kept ON public.prescriptions;
--> statement-breakpoint
CREATE TRIGGER clinical_record_kept BEFORE DELETE ON public.prescriptions FOR EACH ROW EXECUTE FUNCTION public.clinical_record_kept();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.clinical_note_signed_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.signed_at IS NOT NULL AND (NEW.subjective, NEW.objective, NEW.assessment, NEW.plan, NEW.diagnoses, NEW.signed_at, NEW.signed_by, NEW.deleted_at, NEW.visit_id, NEW.patient_id, NEW.author_id)
      IS DISTINCT FROM (OLD.subjective, OLD.objective, OLD.assessment, OLD.plan, OLD.diagnoses, OLD.signed_at, OLD.signed_by, OLD.deleted_at, OLD.visit_id, OLD.patient_id, OLD.author_id) THEN
    RAISE EXCEPTION 'a signed note is final; write an addendum' USING ERRCODE = 'restrict_violation';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_note_signed_is_final ON public.clinical_notes;
--> statement-breakpoint
CREATE TRIGGER clinical_note_signed_is_final BEFORE UPDATE ON public.clinical_notes FOR EACH ROW EXECUTE FUNCTION public.clinical_note_signed_is_final();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.clinical_entry_written_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'an entry of table % is written once and never edited', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS clinical_entry_written_once ON public.note_addenda;
--> statement-breakpoint
CREATE TRIGGER clinical_entry_written_once BEFORE UPDATE ON public.note_addenda FOR EACH ROW EXECUTE FUNCTION public.clinical_entry_written_once();
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.clinical_notes WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, visit_id, patient_id, author_id, subjective, objective, assessment, plan, diagnoses, signed_at, signed_by, created_at, updated_at FROM public.clinical_notes
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid) AND signed_at IS NOT NULL;
--> statement-breakpoint
GRANT SELECT (clinic_id, id, visit_id, patient_id, author_id, subjective, objective, assessment, plan, diagnoses, signed_at, signed_by, created_at, updated_at) ON public.clinical_notes TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.clinical_notes ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.clinical_notes;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.clinical_notes FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND signed_at IS NOT NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
GRANT SELECT ON mcp_read.clinical_notes TO vet_mcp_reader;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.note_addenda WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, note_id, patient_id, author_id, text, created_at, updated_at FROM public.note_addenda
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT (clinic_id, id, note_id, patient_id, author_id, text, created_at, updated_at) ON public.note_addenda TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.note_addenda ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.note_addenda;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.note_addenda FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
GRANT SELECT ON mcp_read.note_addenda TO vet_mcp_reader;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.vitals WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, visit_id, recorded_by, measured_at, weight_grams, temperature_dc, heart_rate_bpm, respiratory_rate_bpm, body_condition_score, created_at, updated_at FROM public.vitals
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, visit_id, recorded_by, measured_at, weight_grams, temperature_dc, heart_rate_bpm, respiratory_rate_bpm, body_condition_score, created_at, updated_at) ON public.vitals TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.vitals ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.vitals;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.vitals FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
GRANT SELECT ON mcp_read.vitals TO vet_mcp_reader;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.vaccinations WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, visit_id, vaccine, diseases, lot, lot_expires_on, given_at, given_by, next_due_on, reminder_status, due_closed_at, created_at, updated_at FROM public.vaccinations
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, visit_id, vaccine, diseases, lot, lot_expires_on, given_at, given_by, next_due_on, reminder_status, due_closed_at, created_at, updated_at) ON public.vaccinations TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.vaccinations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.vaccinations;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.vaccinations FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
GRANT SELECT ON mcp_read.vaccinations TO vet_mcp_reader;
--> statement-breakpoint
CREATE OR REPLACE VIEW mcp_read.prescriptions WITH (security_barrier = false, security_invoker = true) AS
  SELECT clinic_id, id, patient_id, visit_id, prescribed_by, drug, dose, route, frequency, duration_days, quantity, instructions, cancelled_at, cancel_reason, created_at, updated_at FROM public.prescriptions
  WHERE clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid);
--> statement-breakpoint
GRANT SELECT (clinic_id, id, patient_id, visit_id, prescribed_by, drug, dose, route, frequency, duration_days, quantity, instructions, cancelled_at, cancel_reason, created_at, updated_at) ON public.prescriptions TO vet_mcp_reader;
--> statement-breakpoint
ALTER TABLE public.prescriptions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
DROP POLICY IF EXISTS mcp_reader_own_clinic ON public.prescriptions;
--> statement-breakpoint
CREATE POLICY mcp_reader_own_clinic ON public.prescriptions FOR SELECT TO vet_mcp_reader USING (deleted_at IS NULL AND clinic_id = (SELECT nullif(current_setting('app.clinic_id', true), '')::uuid));
--> statement-breakpoint
GRANT SELECT ON mcp_read.prescriptions TO vet_mcp_reader;
--> statement-breakpoint
-- Vaccine reminders kept as alerts become due items (a vaccination row without a dose: the
-- alert's message is the vaccine, its date the due date; it keeps the alert's id), and the alert
-- is resolved, so each reminder is in one place. Runs again on a restored older backup.
INSERT INTO public.vaccinations (id, clinic_id, created_at, updated_at, patient_id, vaccine, next_due_on, reminder_status)
  SELECT a.id, a.clinic_id, a.created_at, now(), a.patient_id, left(a.message, 200), coalesce(a.due_date, a.created_at::date), 'pending'
  FROM public.alerts a
  WHERE a.kind = 'vaccine_due' AND a.status = 'active' AND a.deleted_at IS NULL AND a.patient_id IS NOT NULL
  ON CONFLICT (id) DO NOTHING;
--> statement-breakpoint
UPDATE public.alerts SET status = 'resolved', resolved_at = now(), updated_at = now()
  WHERE kind = 'vaccine_due' AND status = 'active' AND deleted_at IS NULL AND patient_id IS NOT NULL;
