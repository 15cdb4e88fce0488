/**
 * Prints the reader's access (the mcp_read views, the reader's column grants, the row-level
 * security policies) from the readable-table definitions, as the latest migration holds it (0009):
 * `bun scripts/generate-reader-migration.ts > drizzle/<new migration>.sql`. Applied migrations
 * never change, so a later change to the definitions goes into a new migration made with
 * `drizzle-kit generate --custom` and filled by this script (0003 created the role, the schema
 * and the first views; 0008 replaced the views with ones planned as part of the query; 0009 reads
 * the clinic once per statement instead of once per row).
 */
import { readerAccessSql } from "../src/modules/mcp/sql-guard/readable-tables";

const header = `-- query_database, defence in depth: the clinic views run with the reader's own rights
-- (security_invoker) instead of as security barriers, so PostgreSQL plans them as part of the
-- query (indexes for ORDER BY … LIMIT, join order, statistics). The reader may SELECT only the
-- columns the views show, and row-level security shows it only the live rows of the clinic in
-- app.clinic_id, before any condition of the query runs. The clinic is read once per statement
-- (a scalar subquery, which PostgreSQL runs as an InitPlan), not once per row scanned.
`;
// security_invoker views arrived in PostgreSQL 15: an older server is told so in one line.
const versionCheck = `DO $$
BEGIN
  IF current_setting('server_version_num')::int < 150000 THEN
    RAISE EXCEPTION 'vet-clinic-service needs PostgreSQL 15 or newer; this server runs %', current_setting('server_version');
  END IF;
END $$`;
console.log(header + [versionCheck, ...readerAccessSql()].join(";\n--> statement-breakpoint\n") + ";");
