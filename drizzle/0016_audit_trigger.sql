-- The event log is written by one trigger on every clinic table, in the transaction of the
-- change: a rollback takes the event away, and new resources get it by attaching the trigger
-- (select audit_attach('table', 'entity')). A table without an id of its own (one row per clinic,
-- such as the SII certificate) names the clinic as the entity. The actor comes from transaction-local settings
-- (app.actor_type, app.actor_id, app.actor_name, app.request_id, app.now) that the service sets
-- with set_config(…, true) at the start of each transaction, so it works behind a
-- transaction-mode pooler. Bulk copies (restores, moves) set app.audit = 'off'.
CREATE OR REPLACE FUNCTION uuid_v7_at(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- Status values that name their own action (invoice: void -> invoice.voided); other status changes are <entity>.status_changed.
  verbs jsonb := coalesce(TG_ARGV[1], '{}')::jsonb;
  old_row jsonb;
  new_row jsonb;
  row_data jsonb;
  changes jsonb := '{}'::jsonb;
  verb text;
  occurred timestamptz;
  clinic uuid;
  event_id uuid;
BEGIN
  IF current_setting('app.audit', true) = 'off' THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
  IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
  row_data := coalesce(new_row, old_row);
  IF TG_OP <> 'DELETE' THEN
    -- One statement over the row's fields: identity and bookkeeping columns (they change with
    -- everything, or on every use) say nothing; sensitive ones say only that they changed.
    SELECT coalesce(jsonb_object_agg(n.key,
             CASE WHEN n.key ~ '(password|hash|token|secret|certificate|private|signature|xml|caf|_key$|^key$)' THEN '{"redacted": true}'::jsonb
                  WHEN old_row IS NULL THEN jsonb_build_object('to', n.value)
                  ELSE jsonb_build_object('from', old_row -> n.key, 'to', n.value) END), '{}'::jsonb)
      INTO changes
      FROM jsonb_each(new_row) n
      WHERE n.key NOT IN ('id', 'clinic_id', 'created_at', 'updated_at', 'last_used_at')
        AND (old_row -> n.key) IS DISTINCT FROM n.value
        AND NOT (old_row IS NULL AND n.value = 'null'::jsonb);
    -- An update that changed nothing (or only bookkeeping) did not happen.
    IF TG_OP = 'UPDATE' AND changes = '{}'::jsonb THEN RETURN NULL; END IF;
  END IF;
  verb := CASE
    WHEN TG_OP = 'INSERT' THEN 'created'
    WHEN TG_OP = 'DELETE' THEN 'deleted'
    WHEN changes ? 'deleted_at' THEN CASE WHEN old_row ->> 'deleted_at' IS NULL THEN 'deleted' ELSE 'restored' END
    WHEN changes ? 'revoked_at' AND old_row ->> 'revoked_at' IS NULL THEN 'revoked'
    WHEN changes ? 'status' THEN coalesce(verbs ->> (new_row ->> 'status'), 'status_changed')
    WHEN changes ? 'role' THEN 'role_changed'
    ELSE 'updated' END;
  occurred := coalesce(nullif(current_setting('app.now', true), '')::timestamptz, clock_timestamp());
  clinic := (CASE WHEN TG_TABLE_NAME = 'clinics' THEN row_data ->> 'id' ELSE row_data ->> 'clinic_id' END)::uuid;
  event_id := uuid_v7_at(occurred);
  INSERT INTO events (id, clinic_id, occurred_at, actor_type, actor_id, actor_name, action, entity_type, entity_id, changes, request_id)
  VALUES (
    event_id, clinic, occurred,
    coalesce(nullif(current_setting('app.actor_type', true), ''), 'system'),
    nullif(current_setting('app.actor_id', true), ''),
    nullif(current_setting('app.actor_name', true), ''),
    TG_ARGV[0] || '.' || verb, TG_ARGV[0], coalesce(row_data ->> 'id', row_data ->> 'clinic_id')::uuid, changes,
    nullif(current_setting('app.request_id', true), '')
  );
  -- Queued in the same transaction for every enabled endpoint of the clinic that subscribes to
  -- it (an endpoint is not told about changes to itself); dispatchers are woken by NOTIFY,
  -- which is sent at commit, and only when something was queued.
  INSERT INTO webhook_deliveries (id, clinic_id, endpoint_id, event_id, state, attempts, next_attempt_at, created_at)
  SELECT uuid_v7_at(occurred), clinic, e.id, event_id, 'pending', 0, occurred, occurred
  FROM webhook_endpoints e
  WHERE e.clinic_id = clinic AND e.enabled AND e.deleted_at IS NULL AND (e.events @> ARRAY['*'] OR e.events @> ARRAY[TG_ARGV[0] || '.' || verb])
    AND e.id IS DISTINCT FROM (row_data ->> 'id')::uuid;
  IF FOUND THEN PERFORM pg_notify('webhook_deliveries', clinic::text); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_attach(target regclass, entity text, verbs jsonb DEFAULT '{}') RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS audit_change ON %s', target);
  EXECUTE format('CREATE TRIGGER audit_change AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION audit_record_change(%L, %L)', target, entity, verbs::text);
END $$;
--> statement-breakpoint
SELECT audit_attach('clinics', 'clinic');
--> statement-breakpoint
SELECT audit_attach('users', 'user');
--> statement-breakpoint
SELECT audit_attach('tutors', 'tutor');
--> statement-breakpoint
SELECT audit_attach('patients', 'patient');
--> statement-breakpoint
SELECT audit_attach('visits', 'visit');
--> statement-breakpoint
SELECT audit_attach('alerts', 'alert', '{"resolved": "resolved", "active": "reopened"}');
--> statement-breakpoint
SELECT audit_attach('invoices', 'invoice', '{"emitted": "emitted", "paid": "paid", "void": "voided", "credited": "credited"}');
--> statement-breakpoint
SELECT audit_attach('payments', 'payment');
--> statement-breakpoint
SELECT audit_attach('refunds', 'refund');
--> statement-breakpoint
SELECT audit_attach('tax_documents', 'tax_document');
--> statement-breakpoint
SELECT audit_attach('api_keys', 'mcp_key');
--> statement-breakpoint
SELECT audit_attach('mcp_reports', 'mcp_report');
--> statement-breakpoint
SELECT audit_attach('webhook_endpoints', 'webhook');
--> statement-breakpoint
SELECT audit_attach('clinical_notes', 'note');
--> statement-breakpoint
SELECT audit_attach('note_addenda', 'note_addendum');
--> statement-breakpoint
SELECT audit_attach('vitals', 'vitals');
--> statement-breakpoint
SELECT audit_attach('vaccinations', 'vaccination');
--> statement-breakpoint
SELECT audit_attach('prescriptions', 'prescription');
--> statement-breakpoint
SELECT audit_attach('oauth_connections', 'mcp_connection');
