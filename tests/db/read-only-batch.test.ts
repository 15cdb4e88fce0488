import { afterAll, beforeAll, expect, test } from "bun:test";
import { pgErrorCode } from "../../src/db/client";
import { createTestDatabase, type TestDatabase } from "../helpers/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await database.query("CREATE TABLE batch_probe (id integer PRIMARY KEY, label text)");
  await database.query("INSERT INTO batch_probe VALUES (1, 'one'), (2, 'two')");
});
afterAll(() => database.destroy());

const setting = (value: string) => ({ text: "SELECT set_config('app.clinic_id', $1, true) AS set", params: [value], fixedText: true });
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
