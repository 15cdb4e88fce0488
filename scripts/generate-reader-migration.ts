/**
 * Prints the SQL of drizzle/0003_mcp_reader_views.sql from the readable-table definitions:
 * `bun scripts/generate-reader-migration.ts > drizzle/0003_mcp_reader_views.sql`. Applied
 * migrations never change, so a later change to the definitions goes into a new migration.
 */
import { READABLE_TABLES, viewDefinitionsSql } from "../src/modules/mcp/sql-guard/readable-tables";
const bp = "\n--> statement-breakpoint\n";
const parts: string[] = [];
parts.push(`-- query_database, defence in depth: a role that can only SELECT curated per-clinic views.
-- Each view shows the live rows of the clinic in current_setting('app.clinic_id') (set by the
-- executor inside its READ ONLY transaction), without secret columns. The reader has no
-- privilege on any base table, and row-level security on the base tables pins the same
-- clinic for it should it ever be granted one.
CREATE SCHEMA IF NOT EXISTS mcp_read`);
parts.push(`DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'vet_mcp_reader') THEN
    CREATE ROLE vet_mcp_reader NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- another database of the same cluster created it at the same moment
END $$`);
parts.push(`DO $$
BEGIN
  IF NOT pg_has_role(current_user, 'vet_mcp_reader', 'MEMBER') THEN
    EXECUTE format('GRANT vet_mcp_reader TO %I', current_user);
  END IF;
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'could not grant vet_mcp_reader to %: %', current_user, SQLERRM;
END $$`);
parts.push(viewDefinitionsSql());
parts.push(`GRANT USAGE ON SCHEMA mcp_read TO vet_mcp_reader`);
parts.push(`GRANT SELECT ON ALL TABLES IN SCHEMA mcp_read TO vet_mcp_reader`);
for (const t of READABLE_TABLES) {
  parts.push(`ALTER TABLE public.${t.name} ENABLE ROW LEVEL SECURITY`);
  parts.push(`CREATE POLICY mcp_reader_own_clinic ON public.${t.name} FOR SELECT TO vet_mcp_reader USING (clinic_id = nullif(current_setting('app.clinic_id', true), '')::uuid)`);
}
parts.push(`-- Best effort (needs the functions' owner, i.e. a superuser): the reader must not change the
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
END $$`);
console.log(parts.join(";" + bp) + ";");
