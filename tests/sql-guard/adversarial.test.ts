import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { guardSql } from "../../src/modules/mcp/sql-guard/guard";
import { createTestApp, type Refusal, type TestApp } from "../helpers/app";
import { POSTGRES_URL } from "../helpers/database";
import { registerClinic } from "../helpers/clinic";
import { createKey, invoke, usageRows, type QueryResult } from "../mcp/helpers";
import { ADVERSARIAL, ALL_ADVERSARIAL } from "./adversarial-queries";
import { ROW_COUNTS_SQL } from "./fixtures";

test("the adversarial suite is large and covers every class", () => {
  expect(ALL_ADVERSARIAL.length).toBeGreaterThanOrEqual(150);
  expect(Object.keys(ADVERSARIAL)).toEqual(expect.arrayContaining(["ddl", "dml", "copy", "transactions", "settings", "procedural", "catalogs", "service_tables", "table_functions", "functions", "attribute_notation", "cte", "clauses", "comments_and_quotes", "exhaustion"]));
});

describe.each(Object.entries(ADVERSARIAL))("the guard refuses %s", (_group, list) => {
  test.each(list.map(([sql, reason]) => [sql.length > 120 ? `${sql.slice(0, 117)}…` : sql, sql, reason] as const))("%s", (_label, sql, reason) => {
    const result = guardSql(sql);
    expect(result.ok, sql).toBe(false);
    if (!result.ok && reason) expect(result.reason, `${sql}: ${result.message}`).toBe(reason);
    if (!result.ok) expect(result.message.length).toBeGreaterThan(5);
  });
});

describe("through query_database", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test("every adversarial statement is a 400 SQL_GUARD_BLOCKED, logged as blocked with its reason; nothing is written; the service still answers", async () => {
    const owner = await registerClinic(t);
    await owner.as("POST", "/api/v1/tutors", { json: { name: "Ana" } });
    await t.database.query("update clinics set plan = 'enterprise', burst_per_minute = 100000 where id = $1", [owner.clinic.id]);
    const key = await createKey(owner, { scopes: ["query"], rate_limit_per_day: 100_000 });
    const [before] = await t.database.query<{ n: number }>(ROW_COUNTS_SQL);
    for (const { sql } of ALL_ADVERSARIAL) {
      const r = await invoke<Refusal<{ reason: string }>>(t, key.api_key, "query_database", { sql });
      if (sql.length > 10_000) {
        expect(r.status, r.text).toBe(422); // over the input cap: refused by the input schema, still counted
        continue;
      }
      if (sql === "") {
        expect(r.status, r.text).toBe(422);
        continue;
      }
      expect(r.status, `${sql} → ${r.text}`).toBe(400);
      expect(r.body.code).toBe("SQL_GUARD_BLOCKED");
      expect(r.body.error).toBe("query_blocked");
      expect(r.body.details.reason).toBeString();
    }
    const [after] = await t.database.query<{ n: number }>(ROW_COUNTS_SQL);
    expect(after!.n).toBe(before!.n);
    expect((await t.request("GET", "/health")).status).toBe(200);
    const rows = await usageRows(t, key.id);
    const blocked = rows.filter((row) => row.outcome === "blocked");
    expect(blocked.length).toBeGreaterThan(200);
    expect(blocked.every((row) => row.status_code === 400 && row.reason && row.sql_text)).toBe(true);
    const sleep = rows.find((row) => row.sql_text === "SELECT pg_sleep(10)");
    expect(sleep).toMatchObject({ outcome: "blocked", reason: "FORBIDDEN_FUNCTION" });
  });

  test("usage rows keep the first 2,000 characters of the SQL and the rows returned", async () => {
    const owner = await registerClinic(t);
    await owner.as("POST", "/api/v1/tutors", { json: { name: "Ana" } });
    const key = await createKey(owner, { scopes: ["query"] });
    const long = `SELECT name FROM tutors WHERE name <> '${"x".repeat(3000)}'`;
    const r = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: long });
    expect(r.status, r.text).toBe(200);
    expect(r.body.row_count).toBe(1);
    const [row] = await usageRows(t, key.id);
    expect(row!.sql_text!.length).toBe(2000);
    const [logged] = await t.database.query<{ rows_returned: number }>("select rows_returned from mcp_usage_log where api_key_id = $1", [key.id]);
    expect(logged!.rows_returned).toBe(1);
  });

  /**
   * PGlite cannot interrupt a running statement (no timer signals in its WebAssembly build): there
   * the default QUERY_MAX_COST refuses the statement before it runs, from its planner estimate;
   * a PostgreSQL server cuts it with the statement timeout. Either way: 400 QUERY_TIMEOUT, and
   * the service answers the next query at once.
   */
  test("pure CPU exhaustion is refused or cut (400 QUERY_TIMEOUT); the service still answers", async () => {
    const slow = await createTestApp({ config: { queryTimeoutMs: 300 } });
    const owner = await registerClinic(slow);
    for (let i = 0; i < 12; i++) await owner.as("POST", "/api/v1/tutors", { json: { name: `T${i}` } });
    const key = await createKey(owner, { scopes: ["query"] });
    const sql = "SELECT count(*) FROM tutors a, tutors b, tutors c, tutors d, tutors e, tutors f, tutors g, tutors h";
    const r = await invoke<Refusal<{ estimated_cost: number; max_cost: number }>>(slow, key.api_key, "query_database", { sql });
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe("QUERY_TIMEOUT");
    if (!POSTGRES_URL) expect(r.body.details.estimated_cost).toBeGreaterThan(r.body.details.max_cost);
    expect((await invoke<QueryResult>(slow, key.api_key, "query_database", { sql: "SELECT count(*) AS n FROM tutors" })).body.rows).toEqual([{ n: 12 }]);
    await slow.close();
  });

  test.skipIf(Boolean(POSTGRES_URL))("on the embedded database the cap follows the data: a join over fresh rows is refused, a count is not", async () => {
    const capped = await createTestApp({ config: { queryMaxCost: 50 } });
    const owner = await registerClinic(capped);
    const key = await createKey(owner, { scopes: ["query"] });
    const threeWay = "SELECT count(*) FROM tutors a, tutors b, tutors c";
    expect((await invoke(capped, key.api_key, "query_database", { sql: threeWay })).status).toBe(200); // no tutors yet: cheap
    for (let i = 0; i < 20; i++) await owner.as("POST", "/api/v1/tutors", { json: { name: `T${i}` } });
    const r = await invoke<Refusal<{ estimated_cost: number; max_cost: number }>>(capped, key.api_key, "query_database", { sql: `${threeWay} WHERE a.id <> b.id` }); // a new statement: estimated afresh
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe("QUERY_TIMEOUT");
    expect(r.body.details.max_cost, r.text).toBe(50);
    expect(r.body.details.estimated_cost).toBeGreaterThan(50);
    const count = await invoke<QueryResult>(capped, key.api_key, "query_database", { sql: "SELECT count(*) AS n FROM tutors" });
    expect(count.body.rows, count.text).toEqual([{ n: 20 }]);
    await capped.close();
  });
});
