import { describe, expect, test } from "bun:test";
import { executeGuarded, ExecutorMemory } from "../../src/modules/mcp/sql-guard/execute";
import { guardSql } from "../../src/modules/mcp/sql-guard/guard";
import { READER_ROLE } from "../../src/modules/mcp/sql-guard/readable-tables";
import { reportTemplates } from "../../src/modules/mcp-reports/templates";
import { parameterTypes } from "../../src/modules/mcp/tools/saved-report";
import type { TestDatabase } from "../helpers/database";
import { CLINIC_A, useTwoClinics } from "./fixtures";

/**
 * The clinic views are planned as part of the query (security_invoker views, row-level
 * security on the base tables): conditions reach the indexes. These tests read the plans the
 * reader gets, with sequential scans priced out so that a usable index is always taken.
 */
const memory = new ExecutorMemory();
let database: TestDatabase;
useTwoClinics((made) => (database = made));

const limits = { timeoutMs: 5000, maxRows: 1000 };

/** The plan the reader gets for a guarded statement, as the executor would run it. */
async function readerPlan(sql: string): Promise<string> {
  const guarded = guardSql(sql);
  if (!guarded.ok) throw new Error(`${sql} was refused: ${guarded.message}`);
  const settings = { text: "SELECT set_config('app.clinic_id', $1, true), set_config('role', $2, true), set_config('enable_seqscan', 'off', true)", params: [CLINIC_A, READER_ROLE] };
  const [, plan] = await database.readOnlyBatch([settings, { text: `EXPLAIN ${guarded.sql}`, params: guarded.bindsClinic ? [CLINIC_A] : [] }]);
  return plan!.rows.map((row) => String(row[0])).join("\n");
}

describe("a timestamptz column compared with a date or a timestamp", () => {
  const queries = [
    "SELECT id FROM visits WHERE scheduled_at >= DATE '2026-01-01' AND scheduled_at < DATE '2026-01-01' + 30 ORDER BY scheduled_at, id",
    "SELECT id FROM visits v WHERE v.scheduled_at BETWEEN '2025-12-01'::date AND CAST('2026-03-01' AS date) ORDER BY v.scheduled_at, id",
    "SELECT id FROM visits WHERE TIMESTAMP '2026-01-01 00:00' <= scheduled_at ORDER BY scheduled_at, id",
  ];

  test.each(queries)("uses the clinic's scheduled_at index, with the rows the comparison PostgreSQL would make gives: %s", async (sql) => {
    const plan = await readerPlan(sql);
    expect(plan, plan).toMatch(/Index Cond: \(.*scheduled_at/);
    const guarded = guardSql(sql);
    if (!guarded.ok) throw new Error(guarded.message);
    const result = await executeGuarded(database, memory, CLINIC_A, guarded.sql, guarded.bindsClinic, limits);
    // The same comparison on the base table as the service's own user, where no cast is added.
    const base = sql.replace(/FROM visits( v)? WHERE/, (_, alias = "") => `FROM visits${alias} WHERE clinic_id = '${CLINIC_A}' AND deleted_at IS NULL AND`);
    expect(result.rows).toEqual(await database.query(base));
  });

  test("the value is cast to timestamptz by the guard; a date column is left alone", () => {
    const guarded = guardSql("SELECT id FROM visits WHERE scheduled_at >= current_date UNION ALL SELECT id FROM alerts WHERE due_date >= current_date");
    expect(guarded).toMatchObject({ ok: true });
    const sql = (guarded as { sql: string }).sql;
    expect(sql).toContain("scheduled_at >= CAST((current_date) AS timestamptz)");
    expect(sql).toContain("due_date >= current_date");
  });

  test("a saved report's date placeholder is cast after it is numbered", () => {
    const guarded = guardSql("SELECT sum(amount) AS total FROM payments WHERE paid_at >= :from", new Map([["from", "date"]]));
    expect(guarded).toMatchObject({ ok: true, parameters: ["from"] });
    expect((guarded as { sql: string }).sql).toContain("paid_at >= CAST((CAST(CAST($2 AS text) AS date)) AS timestamptz)");
  });
});

test("an outer ORDER BY … LIMIT over a view reads the clinic's index in order, without sorting the clinic's rows", async () => {
  const plan = await readerPlan("SELECT id, scheduled_at FROM visits ORDER BY scheduled_at DESC LIMIT 5");
  expect(plan, plan).toMatch(/Index (Only )?Scan Backward using visits_clinic_scheduled_idx/);
  expect(plan, plan).not.toMatch(/Sort/);
});

test("the overdue-invoices starter report reads the clinic's open invoices only, in emission order", async () => {
  const report = reportTemplates("America/Santiago").find((template) => template.name === "overdue_invoices")!;
  const guarded = guardSql(report.sql, parameterTypes(report.parameters));
  if (!guarded.ok) throw new Error(guarded.message);
  const values = (guarded.parameters ?? []).map((name) => (name === "days" ? "30" : null));
  const settings = { text: "SELECT set_config('app.clinic_id', $1, true), set_config('role', $2, true), set_config('enable_seqscan', 'off', true)", params: [CLINIC_A, READER_ROLE] };
  const [, explained] = await database.readOnlyBatch([settings, { text: `EXPLAIN ${guarded.sql}`, params: guarded.bindsClinic ? [CLINIC_A, ...values] : values }]);
  const plan = explained!.rows.map((row) => String(row[0])).join("\n");
  expect(plan, plan).toMatch(/Index Scan using invoices_clinic_open_idx/);
  expect(plan, plan).not.toMatch(/Sort/);
});

describe("the clinic the reader reads", () => {
  test.each(["visits", "payments", "invoice_items"])("is read once per statement, never once per row scanned: %s", async (table) => {
    const settings = { text: "SELECT set_config('app.clinic_id', $1, true), set_config('role', $2, true), set_config('enable_indexscan', 'off', true), set_config('enable_bitmapscan', 'off', true)", params: [CLINIC_A, READER_ROLE] };
    const [, plan] = await database.readOnlyBatch([settings, { text: `EXPLAIN (VERBOSE) SELECT count(*) FROM mcp_read.${table}`, params: [] }]);
    const text = plan!.rows.map((row) => String(row[0])).join("\n");
    // The policy's and the view's clinic comparisons take an InitPlan's value (shown as `$0` by
    // PostgreSQL 15, `(InitPlan 1).col1` by 17); current_setting appears only inside the InitPlans.
    const filter = text.split("\n").find((line) => line.trim().startsWith("Filter:")) ?? "";
    expect(text, text).toContain("InitPlan");
    expect(filter, text).toMatch(/clinic_id = (\$\d|\(InitPlan \d\))/);
    expect(filter, text).not.toContain("current_setting");
  });

  test("the latest reader migration ends with what scripts/generate-reader-migration.ts prints from the table definitions", async () => {
    const root = `${import.meta.dir}/../..`;
    const printed = Bun.spawnSync(["bun", "scripts/generate-reader-migration.ts"], { cwd: root }).stdout.toString();
    // The latest migration that sets the reader's views (one may do other work before them).
    const migrations = (await Array.fromAsync(new Bun.Glob("drizzle/*.sql").scan({ cwd: root }))).sort();
    const texts = await Promise.all(migrations.map((path) => Bun.file(`${root}/${path}`).text()));
    const latest = texts.filter((text) => text.includes("CREATE OR REPLACE VIEW mcp_read.")).at(-1)!;
    expect(latest.endsWith(printed)).toBe(true);
  });
});
