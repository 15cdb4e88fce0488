import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { pgErrorCode } from "../../src/db/client";
import { PREPARED_STATEMENT_LIMIT, postgresReadOnlyBatch } from "../../src/db/read-only-batch";
import { createTestDatabase, databaseKind, type TestDatabase } from "../helpers/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await database.query("CREATE TABLE batch_probe (id integer PRIMARY KEY, label text)");
  await database.query("INSERT INTO batch_probe VALUES (1, 'one'), (2, 'two')");
});
afterAll(() => database.destroy());

const setting = (value: string) => ({ text: "SELECT set_config('app.clinic_id', $1, true) AS set", params: [value], prepare: true });
const readSetting = { text: "SELECT current_setting('app.clinic_id', true) AS value", params: [] };

async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("expected the batch to fail");
}

test("one result per statement, in order, with column names and type ids", async () => {
  const results = await database.readOnlyBatch([setting("first"), { text: "SELECT id, label FROM batch_probe WHERE id = $1", params: ["2"] }, readSetting]);
  expect(results.length).toBe(3);
  expect(results[1]!.rows).toEqual([[2, "two"]]);
  expect(results[1]!.fields).toEqual([{ name: "id", typeId: 23 }, { name: "label", typeId: 25 }]);
  expect(results[2]!.rows).toEqual([["first"]]);
});

test("a write is refused by READ ONLY and nothing is written", async () => {
  const error = await failure(database.readOnlyBatch([{ text: "INSERT INTO batch_probe VALUES (3, 'three') RETURNING id", params: [] }]));
  expect(pgErrorCode(error)).toBe("25006");
  expect(await database.query("SELECT count(*)::int AS n FROM batch_probe")).toEqual([{ n: 2 }]);
});

test("the first failing statement's error is reported, the rest is rolled back and the next batch starts clean", async () => {
  const error = await failure(database.readOnlyBatch([setting("leaked?"), { text: "SELECT * FROM no_such_table", params: [] }, readSetting]));
  expect(pgErrorCode(error)).toBe("42P01"); // not 25P02 (the aborted transaction's follow-on error)
  const [after] = await database.readOnlyBatch([readSetting]);
  expect([null, ""]).toContain(after!.rows[0]![0] as string | null);
  // The connection is back out of any transaction: an ordinary write works.
  await database.query("INSERT INTO batch_probe VALUES (4, 'four')");
  await database.query("DELETE FROM batch_probe WHERE id = 4");
});

test("transaction-local settings do not leak into later work on the same connections", async () => {
  await database.readOnlyBatch([setting("clinic-x"), readSetting]);
  const [after] = await database.readOnlyBatch([readSetting]);
  expect([null, ""]).toContain(after!.rows[0]![0] as string | null);
});

test("concurrent batches never see each other's settings", async () => {
  const values = Array.from({ length: 24 }, (_, i) => `clinic-${i}`);
  const seen = await Promise.all(values.map(async (value) => (await database.readOnlyBatch([setting(value), readSetting]))[1]!.rows[0]![0]));
  expect(seen).toEqual(values);
});

test("a prepared statement gives each call its own parameters' rows", async () => {
  const read = (id: string) => database.readOnlyBatch([{ text: "SELECT label FROM batch_probe WHERE id = $1", params: [id], prepare: true }]);
  expect((await read("1"))[0]!.rows).toEqual([["one"]]);
  expect((await read("2"))[0]!.rows).toEqual([["two"]]);
  expect((await read("3"))[0]!.rows).toEqual([]);
});

test("the same new prepared statement twice in one batch is prepared once and runs twice", async () => {
  const twice = { text: "SELECT label FROM batch_probe WHERE id = $1 /* twice */", params: ["1"], prepare: true };
  const results = await database.readOnlyBatch([twice, { ...twice, params: ["2"] }]);
  expect(results.map((r) => r.rows)).toEqual([[["one"]], [["two"]]]);
});

test("a prepared statement that failed is not reused as if it existed", async () => {
  const broken = { text: "SELECT * FROM not_there_yet", params: [], prepare: true };
  expect(pgErrorCode(await failure(database.readOnlyBatch([broken])))).toBe("42P01");
  expect(pgErrorCode(await failure(database.readOnlyBatch([broken])))).toBe("42P01"); // not 26000: no such prepared statement
  const divide = (by: string) => database.readOnlyBatch([{ text: "SELECT 10 / $1::int AS q", params: [by], prepare: true }]);
  expect(pgErrorCode(await failure(divide("0")))).toBe("22012");
  expect((await divide("5"))[0]!.rows).toEqual([[2]]);
});

test.skipIf(databaseKind !== "pglite")("the embedded database keeps at most PREPARED_STATEMENT_LIMIT prepared statements", async () => {
  for (let i = 0; i < PREPARED_STATEMENT_LIMIT + 30; i++) {
    await database.readOnlyBatch([{ text: `SELECT ${i} AS n`, params: [], prepare: true }]);
  }
  await database.readOnlyBatch([{ text: "SELECT 'one more'", params: [], prepare: true }]); // carries the pending closes
  const [{ n }] = (await database.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements")) as [{ n: number }];
  expect(n).toBeLessThanOrEqual(PREPARED_STATEMENT_LIMIT);
  expect(n).toBeGreaterThan(PREPARED_STATEMENT_LIMIT / 2);
});

test.skipIf(databaseKind !== "postgres")("a PostgreSQL connection prepares at most PREPARED_STATEMENT_LIMIT statements a generation", async () => {
  const client = postgres(database.url!, { max: 1, onnotice: () => {} });
  let now = 0;
  const batch = postgresReadOnlyBatch(client, 60, () => true, () => now);
  const prepared = async () => Number((await client.unsafe("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE 'SELECT % AS generation_probe'", [], { prepare: false }))[0]!.n);
  try {
    for (let i = 0; i < PREPARED_STATEMENT_LIMIT + 20; i++) await batch([{ text: `SELECT ${i} AS generation_probe`, params: [], prepare: true }]);
    expect(await prepared()).toBe(PREPARED_STATEMENT_LIMIT);
    expect((await batch([{ text: `SELECT ${PREPARED_STATEMENT_LIMIT + 5} AS generation_probe`, params: [], prepare: true }]))[0]!.rows).toEqual([[PREPARED_STATEMENT_LIMIT + 5]]);
    now = 61_000; // a new generation: the connection this one outlived has been replaced by then
    await batch([{ text: "SELECT 'next' AS generation_probe", params: [], prepare: true }]);
    expect(await prepared()).toBe(PREPARED_STATEMENT_LIMIT + 1);
  } finally {
    await client.end();
  }
});

test.skipIf(databaseKind !== "postgres")("query batches have their own connections: a busy query pool never holds up the service's own queries", async () => {
  const [app] = await database.readOnlyBatch([{ text: "SELECT current_setting('application_name')", params: [] }]);
  expect(app!.rows).toEqual([["vet-clinic-query"]]);
  expect(await database.query("SELECT current_setting('application_name') AS app")).toEqual([{ app: "vet-clinic" }]);
  // More slow batches than the service pool has connections: with one shared pool they would queue it.
  const finished: string[] = [];
  const slow = Array.from({ length: 12 }, () => database.readOnlyBatch([{ text: "SELECT pg_sleep(0.2)", params: [] }]).then(() => finished.push("query")));
  await database.query("SELECT 1").then(() => finished.push("service"));
  await Promise.all(slow);
  expect(finished[0]).toBe("service");
});
