-- The event log's trigger, made cheaper (a payment writes two events; README, "Audit trail and
-- webhooks", has what each part costs).
-- * hstore compares a row's old and new fields in one C operator: the changed fields are
--   hstore(NEW) - hstore(OLD); no query runs to find them.
-- * The changed fields are kept as two objects, their old values (fields_before) and new ones
--   (fields_after), cut from the row's jsonb with the `-` operator; the API pairs them up as
--   {field: {from, to}} when it reads them.
-- * Sensitive fields (a name with password, hash, token, secret, certificate, private, signature,
--   xml, caf or key) are found when the trigger is attached, not on every change: they are left
--   out of both objects and only named (redacted_fields). A test holds every attached table's list
--   to its current columns, so a column added later is not missed.
-- * The change context (actor, request id, the app's clock) is one transaction-local setting,
--   app.context, a JSON object the service sets with one set_config(…, true) per transaction.
-- Bulk copies (restores, moves) set app.audit = 'off': the trigger's WHEN clause, evaluated
-- without calling the function, skips every row then.
-- Bookkeeping columns (identity, timestamps that move with every change or every use, and per
-- table the columns passed to audit_attach) say nothing: an update of only those writes no event.
CREATE EXTENSION IF NOT EXISTS hstore;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION audit_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- TG_ARGV: entity, status verbs (jsonb), clinic column, id column, sensitive columns, bookkeeping columns.
  context jsonb;
  old_fields hstore;
  changed hstore;
  left_out text[];
  row_data jsonb;
  before jsonb;
  after jsonb;
  redacted text[];
  field text;
  verb text;
  occurred timestamptz;
  clinic uuid;
  event_id uuid;
BEGIN
  IF TG_OP = 'INSERT' THEN
    row_data := to_jsonb(NEW);
    after := jsonb_strip_nulls(row_data) - TG_ARGV[5]::text[] - TG_ARGV[4]::text[];
    verb := 'created';
    IF TG_ARGV[4] <> '{}' THEN
      FOREACH field IN ARRAY TG_ARGV[4]::text[] LOOP
        IF jsonb_typeof(row_data -> field) <> 'null' THEN redacted := redacted || field; END IF;
      END LOOP;
    END IF;
  ELSIF TG_OP = 'UPDATE' THEN
    old_fields := hstore(OLD);
    changed := hstore(NEW) - old_fields - TG_ARGV[5]::text[];
    -- An update that changed nothing (or only bookkeeping) did not happen.
    IF changed = ''::hstore THEN RETURN NULL; END IF;
    left_out := akeys(old_fields - akeys(changed)) || TG_ARGV[4]::text[];
    row_data := to_jsonb(NEW);
    before := to_jsonb(OLD) - left_out;
    after := row_data - left_out;
    IF TG_ARGV[4] <> '{}' THEN redacted := nullif(akeys(slice(changed, TG_ARGV[4]::text[])), '{}'); END IF;
    -- Status values that name their own action (invoice: void -> invoice.voided); other status changes are <entity>.status_changed.
    verb := CASE
      WHEN changed ? 'deleted_at' THEN CASE WHEN old_fields -> 'deleted_at' IS NULL THEN 'deleted' ELSE 'restored' END
      WHEN changed ? 'revoked_at' AND old_fields -> 'revoked_at' IS NULL THEN 'revoked'
      WHEN changed ? 'status' THEN coalesce(TG_ARGV[1]::jsonb ->> (changed -> 'status'), 'status_changed')
      WHEN changed ? 'role' THEN 'role_changed'
      ELSE 'updated' END;
  ELSE
    row_data := to_jsonb(OLD);
    verb := 'deleted';
  END IF;
  context := nullif(current_setting('app.context', true), '')::jsonb;
  occurred := coalesce((context ->> 'now')::timestamptz, clock_timestamp());
  clinic := (row_data ->> TG_ARGV[2])::uuid;
  event_id := uuid_v7_at(occurred);
  INSERT INTO events (id, clinic_id, occurred_at, actor_type, actor_id, actor_name, action, entity_type, entity_id, changes, fields_before, fields_after, redacted_fields, request_id)
  VALUES (event_id, clinic, occurred, coalesce(context ->> 'actor_type', 'system'), context ->> 'actor_id', context ->> 'actor_name',
    TG_ARGV[0] || '.' || verb, TG_ARGV[0], (row_data ->> TG_ARGV[3])::uuid, '{}', before, after, redacted, context ->> 'request_id');
  -- Queued in the same transaction for every enabled endpoint of the clinic that subscribes to
  -- it (an endpoint is not told about changes to itself); dispatchers are woken by NOTIFY,
  -- which is sent at commit, and only when something was queued.
  INSERT INTO webhook_deliveries (id, clinic_id, endpoint_id, event_id, state, attempts, next_attempt_at, created_at)
  SELECT uuid_v7_at(occurred), clinic, e.id, event_id, 'pending', 0, occurred, occurred
  FROM webhook_endpoints e
  WHERE e.clinic_id = clinic AND e.enabled AND e.deleted_at IS NULL AND (e.events @> ARRAY['*'] OR e.events @> ARRAY[TG_ARGV[0] || '.' || verb])
    AND e.id IS DISTINCT FROM (row_data ->> TG_ARGV[3])::uuid;
  IF FOUND THEN PERFORM pg_notify('webhook_deliveries', clinic::text); END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- The table's sensitive columns, as the trigger is given them when attached.
CREATE OR REPLACE FUNCTION audit_sensitive_columns(target regclass) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(attname::text ORDER BY attnum), '{}')
  FROM pg_attribute
  WHERE attrelid = target AND attnum > 0 AND NOT attisdropped
    AND attname ~ '(password|hash|token|secret|certificate|private|signature|xml|caf|_key$|^key$)'
$$;
--> statement-breakpoint
DROP FUNCTION IF EXISTS audit_attach(regclass, text, jsonb);
--> statement-breakpoint
CREATE FUNCTION audit_attach(target regclass, entity text, verbs jsonb DEFAULT '{}', bookkeeping text[] DEFAULT '{}') RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  has_id boolean := EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = target AND attname = 'id' AND NOT attisdropped);
  clinic_column text := CASE WHEN target = 'clinics'::regclass THEN 'id' ELSE 'clinic_id' END;
  -- A table without an id of its own (one row per clinic, such as the SII certificate) names the clinic as the entity.
  id_column text := CASE WHEN has_id THEN 'id' ELSE 'clinic_id' END;
  ignored text[] := ARRAY['id', 'clinic_id', 'created_at', 'updated_at', 'last_used_at'] || bookkeeping;
BEGIN
  EXECUTE format('DROP TRIGGER IF EXISTS audit_change ON %s', target);
  EXECUTE format('CREATE TRIGGER audit_change AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW WHEN (current_setting(''app.audit'', true) IS DISTINCT FROM ''off'') EXECUTE FUNCTION audit_record_change(%L, %L, %L, %L, %L, %L)',
    target, entity, verbs::text, clinic_column, id_column, audit_sensitive_columns(target)::text, ignored::text);
END $$;
--> statement-breakpoint
-- Every table the first trigger was attached to, attached again with the entity and status verbs it was given.
DO $$
DECLARE
  attached record;
BEGIN
  FOR attached IN
    SELECT tgrelid::regclass AS target, split_part(encode(tgargs, 'escape'), '\000', 1) AS entity, split_part(encode(tgargs, 'escape'), '\000', 2) AS verbs
    FROM pg_trigger WHERE tgname = 'audit_change' ORDER BY tgrelid
  LOOP
    PERFORM audit_attach(attached.target, attached.entity, attached.verbs::jsonb);
  END LOOP;
END $$;
