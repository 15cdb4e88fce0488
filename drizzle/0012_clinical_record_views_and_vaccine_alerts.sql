-- The clinical record, part 2 (hand-written): the patient's timeline, the rules that keep the
-- record from being lost or rewritten (enforced by the database too, whoever writes) and the move
-- of the vaccine reminders kept as alerts into due items of the vaccinations. The assistant's
-- read-only views of the record (signed notes only, never drafts) are the next migration,
-- printed by scripts/generate-reader-migration.ts.
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
