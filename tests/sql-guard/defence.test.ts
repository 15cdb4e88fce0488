import { describe, expect, test } from "bun:test";
import { executeGuarded, ExecutorMemory } from "../../src/modules/mcp/sql-guard/execute";
import { guardSql } from "../../src/modules/mcp/sql-guard/guard";
import { READABLE_TABLES, VIEW_SCHEMA } from "../../src/modules/mcp/sql-guard/readable-tables";
import { databaseKind, type TestDatabase } from "../helpers/database";
import { CLINIC_A, CLINIC_B, ROW_COUNTS_SQL, useTwoClinics } from "./fixtures";

/** What the executor remembers between calls (an app owns one; so does this file). */
const memory = new ExecutorMemory();

let database: TestDatabase;
useTwoClinics((made) => (database = made));

const limits = { timeoutMs: 2000, maxRows: 1000 };
/** Straight to the executor: no guard in the way. */
const direct = (sql: string, clinic = CLINIC_A) => executeGuarded(database, memory, clinic, sql, sql.includes("$1"), limits);

describe("defence in depth: the executor alone, handed malicious SQL", () => {
  const cannotWrite = [
    "SELECT * FROM (WITH d AS (DELETE FROM tutors RETURNING *) SELECT * FROM d) x",
    "SELECT * FROM tutors) x; DELETE FROM tutors; SELECT * FROM (SELECT 1",
    "SELECT 1) x; COMMIT; DROP TABLE tutors; SELECT * FROM (SELECT 1",
    "SELECT * FROM mcp_read.tutors FOR UPDATE",
    "SELECT nextval('pg_catalog.pg_class_oid_seq')",
    "SELECT lo_create(0)",
    "SELECT pg_advisory_lock(724311001)",
  ];
  test.each(cannotWrite)("cannot write or lock: %s", async (sql) => {
    const [before] = await database.query<{ n: number }>(ROW_COUNTS_SQL);
    await expect(direct(sql)).rejects.toMatchObject({ code: expect.stringMatching(/^QUERY_(FAILED|TIMEOUT)$/) });
    const [after] = await database.query<{ n: number }>(ROW_COUNTS_SQL);
    expect(after!.n).toBe(before!.n);
  });

  // Without parameters some drivers fall back to the simple protocol, where one string may hold
  // several statements: the executor must send even these as one bound statement.
  test.each([
    "SELECT 1) x; COMMIT; CREATE TABLE pwned (x int); SELECT * FROM (SELECT 1",
    "SELECT 1) x; COMMIT; DELETE FROM api_keys; SELECT * FROM (SELECT 1",
    "SELECT 1) x; RESET ROLE; SELECT * FROM (SELECT 1",
  ])("cannot smuggle a second statement without parameters: %s", async (sql) => {
    const [before] = await database.query<{ n: number }>(ROW_COUNTS_SQL);
    await expect(executeGuarded(database, memory, CLINIC_A, sql, false, limits)).rejects.toMatchObject({ code: "QUERY_FAILED" });
    const [after] = await database.query<{ n: number }>(ROW_COUNTS_SQL);
    expect(after!.n).toBe(before!.n);
    expect(await database.query("SELECT to_regclass('public.pwned') AS t")).toEqual([{ t: null }]);
  });

  test.each([
    "SELECT set_config('app.clinic_id', '01900000-0000-7000-8000-00000000000b', false)",
    "SELECT * FROM mcp_read.tutors, (SELECT set_config('app.clinic_id', '01900000-0000-7000-8000-00000000000b', true)) s",
    "SELECT set_config('statement_timeout', '0', false)",
    "SELECT pg_sleep(0.01)",
  ])("cannot change settings or sleep: %s", async (sql) => {
    await expect(direct(sql)).rejects.toMatchObject({ code: "QUERY_FAILED" });
  });

  test.each([
    "SELECT * FROM public.users",
    "SELECT password_hash FROM users",
    "SELECT key_hash FROM api_keys",
    "SELECT token_hash FROM refresh_tokens",
    "SELECT * FROM public.tutors",
    "SELECT * FROM mcp_usage_log",
    "SELECT * FROM idempotency_keys",
  ])("cannot read the service's own tables or base tables: %s", async (sql) => {
    await expect(direct(sql)).rejects.toMatchObject({ code: "QUERY_FAILED" });
  });

  test("cannot read another clinic's rows, however the view is asked", async () => {
    for (const sql of [
      `SELECT count(*) AS n FROM ${VIEW_SCHEMA}.tutors WHERE clinic_id = '${CLINIC_B}'`,
      `SELECT count(*) AS n FROM ${VIEW_SCHEMA}.tutors WHERE clinic_id <> '${CLINIC_A}' OR true AND name = 'Only In B'`,
      `SELECT count(*) AS n FROM ${VIEW_SCHEMA}.invoices i JOIN ${VIEW_SCHEMA}.tutors t ON t.id = i.tutor_id WHERE t.name = 'Only In B'`,
    ]) {
      const result = await direct(sql);
      expect(result.rows, sql).toEqual([{ n: 0 }]);
    }
    const mine = await direct(`SELECT count(*) AS n FROM ${VIEW_SCHEMA}.tutors`);
    expect(mine.rows).toEqual([{ n: 2 }]);
  });

  test("a condition that errors on another clinic's row never meets one (row-level security runs first)", async () => {
    // Division by zero only on clinic B's row: had the condition run before the clinic filter,
    // the error would tell the attacker that row exists.
    for (const sql of [
      `SELECT count(*) AS n FROM ${VIEW_SCHEMA}.tutors WHERE 1 / (CASE WHEN name = 'Only In B' THEN 0 ELSE 1 END) = 1`,
      `SELECT count(*) AS n FROM ${VIEW_SCHEMA}.tutors t JOIN ${VIEW_SCHEMA}.patients p ON p.tutor_id = t.id WHERE 1 / (CASE WHEN t.name = 'Only In B' THEN 0 ELSE 1 END) = 1 OR true`,
    ]) {
      const result = await direct(sql);
      expect(result.rows.length, sql).toBe(1);
    }
  });

  test("the base tables' granted columns show the reader only the clinic's live rows", async () => {
    const [expected] = await database.query<{ n: number }>(`SELECT count(*)::int AS n FROM tutors WHERE clinic_id = '${CLINIC_A}' AND deleted_at IS NULL`);
    const result = await direct("SELECT count(*)::int AS n, count(*) FILTER (WHERE name = 'Only In B')::int AS b FROM public.tutors");
    expect(result.rows).toEqual([{ n: expected!.n, b: 0 }]);
    await expect(direct("SELECT deleted_at FROM public.tutors")).rejects.toMatchObject({ code: "QUERY_FAILED" });
  });

  test("statistics views show the reader nothing of other tenants", async () => {
    await database.query("ANALYZE tutors");
    const result = await direct("SELECT count(*) AS n FROM pg_stats WHERE tablename = 'tutors'");
    expect(result.rows).toEqual([{ n: 0 }]);
  });
});

describe("two clinics with overlapping data", () => {
  const probes = [
    "SELECT name FROM tutors",
    "SELECT * FROM tutors t FULL JOIN patients p ON p.tutor_id = t.id",
    "WITH tutors AS (SELECT * FROM tutors) SELECT * FROM tutors",
    "SELECT (SELECT count(*) FROM tutors) AS n",
    "SELECT name FROM tutors UNION ALL SELECT name FROM tutors",
    "SELECT * FROM tutors WHERE name = 'Only In B'",
    "SELECT * FROM tutors WHERE id::text LIKE '01900002%'",
    "SELECT * FROM invoices, invoice_items, payments, refunds, tax_documents, alerts, visits",
  ];
  test.each(probes)("clinic A never sees clinic B's rows: %s", async (sql) => {
    const guarded = guardSql(sql);
    if (!guarded.ok) throw new Error(guarded.message);
    const result = await executeGuarded(database, memory, CLINIC_A, guarded.sql, guarded.bindsClinic, limits);
    expect(JSON.stringify(result.rows)).not.toContain("01900002-");
    expect(JSON.stringify(result.rows)).not.toContain("Only In B");
  });
});

test("describe_schema's tables and the mcp_read views hold exactly the same columns", async () => {
  const rows = await database.query<{ table_name: string; column_name: string }>(
    "select table_name, column_name from information_schema.columns where table_schema = $1 order by table_name, ordinal_position",
    [VIEW_SCHEMA],
  );
  const fromViews = new Map<string, string[]>();
  for (const row of rows) fromViews.set(row.table_name, [...(fromViews.get(row.table_name) ?? []), row.column_name]);
  for (const table of READABLE_TABLES) expect(fromViews.get(table.name), table.name).toEqual(["clinic_id", ...table.columns.map((c) => c.name)]);
  expect([...fromViews.keys()].sort()).toEqual(READABLE_TABLES.map((t) => t.name).sort());
});

describe.skipIf(databaseKind !== "pglite")("embedded database: the timeout applied after the fact", () => {
  /** A clock on which every reading is `step` ms after the last: any run "takes" at least that long. */
  const slowClock = (step: number) => {
    let at = 0;
    return () => (at += step);
  };
  const sql = `SELECT count(*) AS n FROM ${VIEW_SCHEMA}.tutors`;

  test("a run past the timeout is QUERY_TIMEOUT (rows discarded), and the same statement is then refused before it runs", async () => {
    const limits = { timeoutMs: 50, maxRows: 10, maxCost: 1e9 };
    const overrun = await executeGuarded(database, memory, CLINIC_A, sql, false, { ...limits, now: slowClock(100) }).catch((error) => error);
    expect(overrun).toMatchObject({ code: "QUERY_TIMEOUT", details: { timeout_ms: 50 } });
    expect(overrun.details.elapsed_ms).toBeGreaterThan(50);
    const again = await executeGuarded(database, memory, CLINIC_A, sql, false, { ...limits, now: slowClock(1) }).catch((error) => error);
    expect(again).toMatchObject({ code: "QUERY_TIMEOUT", details: { timeout_ms: 50 } });
    expect(again.details.previous_run_ms).toBeGreaterThan(50);
    // Another clinic's identical statement is its own, and a quick run answers as usual.
    const other = await executeGuarded(database, memory, CLINIC_B, sql, false, { ...limits, now: slowClock(1) });
    expect(other.rows).toEqual([{ n: 3 }]);
  });
});
