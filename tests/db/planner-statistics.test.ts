import { afterAll, beforeAll, expect, test } from "bun:test";
import { PlannerStatistics } from "../../src/db/planner-statistics";
import { silentLogger } from "../../src/lib/logger";
import { createTestDatabase, type TestDatabase } from "../helpers/database";

let database: TestDatabase;
let statistics: PlannerStatistics;
beforeAll(async () => {
  database = await createTestDatabase();
  statistics = new PlannerStatistics(database, silentLogger);
});
afterAll(() => database.destroy());

const estimatedRows = async (table: string) => (await database.query<{ rows: number }>("SELECT reltuples::int AS rows FROM pg_class WHERE oid = $1::regclass", [`public.${table}`]))[0]!.rows;

/** Writes in one session and has its counters flushed before the commit is answered (no waiting). */
async function insertClinics(count: number): Promise<void> {
  await database.copyTransaction("write", async (session) => {
    await session.query("INSERT INTO clinics (id, name, created_at, updated_at) SELECT gen_random_uuid(), 'clinic ' || g, now(), now() FROM generate_series(1, $1::int) g", [count]);
    await session.query("SELECT pg_stat_force_next_flush()");
  });
}

test("a migrated database is never analyzed: the first pass analyzes every table, the next finds nothing stale", async () => {
  expect(await estimatedRows("visits")).toBe(-1);
  const first = await statistics.refresh();
  expect(first).toContain("visits");
  expect(first).toContain("mcp_usage_log");
  expect(await estimatedRows("visits")).toBe(0);
  expect(await statistics.refresh()).toEqual([]);
});

test("a table changed past the threshold (50 rows + 10 %) is analyzed again, and only that one", async () => {
  await insertClinics(20);
  expect(await statistics.refresh()).toEqual([]);
  await insertClinics(200);
  expect(await statistics.refresh()).toEqual(["clinics"]);
  expect(await estimatedRows("clinics")).toBe(220);
});

test("concurrent passes share one run", async () => {
  await insertClinics(100);
  const [a, b] = await Promise.all([statistics.refresh(), statistics.refresh()]);
  expect(a).toEqual(["clinics"]);
  expect(b).toBe(a);
});
