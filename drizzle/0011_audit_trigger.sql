-- The event log is written by one trigger on every clinic table, in the transaction of the
-- change: a rollback takes the event away, and new resources get it by attaching the trigger
-- (select audit_attach('table', 'entity')). The actor comes from transaction-local settings
-- (app.actor_type, app.actor_id, app.actor_name, app.request_id, app.now) that the service sets
-- with set_config(…, true) at the start of each transaction, so it works behind a
-- transaction-mode pooler. Bulk copies (restores, moves) set app.audit = 'off'.
CREATE OR REPLACE FUNCTION uuid_v7_at(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entity text := TG_ARGV[0];
  -- Status values that name their own action (invoice: void -> invoice.voided); other status changes are <entity>.status_changed.
  verbs jsonb := coalesce(TG_ARGV[1], '{}')::jsonb;
  old_row jsonb;
  new_row jsonb;
  row_data jsonb;
  changes jsonb := '{}'::jsonb;
  field text;
  verb text;
  occurred timestamptz;
BEGIN
  IF current_setting('app.audit', true) = 'off' THEN RETURN NULL; END IF;
  IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
  IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
  row_data := coalesce(new_row, old_row);
  IF TG_OP <> 'DELETE' THEN
    FOR field IN SELECT jsonb_object_keys(row_data) LOOP
      -- Identity and bookkeeping columns change with everything (or on every use) and say nothing.
      CONTINUE WHEN field IN ('id', 'clinic_id', 'created_at', 'updated_at', 'last_used_at');
      CONTINUE WHEN (old_row -> field) IS NOT DISTINCT FROM (new_row -> field);
      CONTINUE WHEN TG_OP = 'INSERT' AND jsonb_typeof(new_row -> field) = 'null';
      IF field ~ '(password|hash|token|secret|certificate|private|signature|xml|caf|_key$|^key$)' THEN
        -- That it changed, never its value.
        changes := changes || jsonb_build_object(field, jsonb_build_object('redacted', true));
      ELSIF TG_OP = 'INSERT' THEN
        changes := changes || jsonb_build_object(field, jsonb_build_object('to', new_row -> field));
      ELSE
        changes := changes || jsonb_build_object(field, jsonb_build_object('from', old_row -> field, 'to', new_row -> field));
      END IF;
    END LOOP;
    -- An update that changed nothing (or only bookkeeping) did not happen.
    IF TG_OP = 'UPDATE' AND changes = '{}'::jsonb THEN RETURN NULL; END IF;
  END IF;
  IF TG_OP = 'INSERT' THEN verb := 'created';
  ELSIF TG_OP = 'DELETE' THEN verb := 'deleted';
  ELSIF changes ? 'deleted_at' THEN verb := CASE WHEN old_row ->> 'deleted_at' IS NULL THEN 'deleted' ELSE 'restored' END;
  ELSIF changes ? 'revoked_at' AND old_row ->> 'revoked_at' IS NULL THEN verb := 'revoked';
  ELSIF changes ? 'status' THEN verb := coalesce(verbs ->> (new_row ->> 'status'), 'status_changed');
  ELSIF changes ? 'role' THEN verb := 'role_changed';
  ELSE verb := 'updated';
  END IF;
  occurred := coalesce(nullif(current_setting('app.now', true), '')::timestamptz, clock_timestamp());
  INSERT INTO events (id, clinic_id, occurred_at, actor_type, actor_id, actor_name, action, entity_type, entity_id, changes, request_id)
  VALUES (
    uuid_v7_at(occurred),
    (CASE WHEN TG_TABLE_NAME = 'clinics' THEN row_data ->> 'id' ELSE row_data ->> 'clinic_id' END)::uuid,
    occurred,
    coalesce(nullif(current_setting('app.actor_type', true), ''), 'system'),
    nullif(current_setting('app.actor_id', true), ''),
    nullif(current_setting('app.actor_name', true), ''),
    entity || '.' || verb,
    entity,
    (row_data ->> 'id')::uuid,
    changes,
    nullif(current_setting('app.request_id', true), '')
  );
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
-- Each event is queued for every enabled endpoint of its clinic that subscribes to it, in the
-- same transaction; dispatchers are woken by NOTIFY (sent at commit, only when something was queued).
CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  queued int;
BEGIN
  -- Events copied in by a restore or a move were delivered (or not) where they happened.
  IF NEW.action = 'webhook.test' OR current_setting('app.audit', true) = 'off' THEN RETURN NULL; END IF;
  INSERT INTO webhook_deliveries (id, clinic_id, endpoint_id, event_id, state, attempts, next_attempt_at, created_at)
  SELECT uuid_v7_at(NEW.occurred_at), NEW.clinic_id, e.id, NEW.id, 'pending', 0, NEW.occurred_at, NEW.occurred_at
  FROM webhook_endpoints e
  WHERE e.clinic_id = NEW.clinic_id AND e.enabled AND e.deleted_at IS NULL AND (e.events @> ARRAY['*'] OR e.events @> ARRAY[NEW.action])
    -- An endpoint is not told about changes to itself (its creation, its own disabling).
    AND e.id <> NEW.entity_id;
  GET DIAGNOSTICS queued = ROW_COUNT;
  IF queued > 0 THEN PERFORM pg_notify('webhook_deliveries', NEW.clinic_id::text); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER webhook_fan_out AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION webhook_fan_out();
