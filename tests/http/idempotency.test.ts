import { afterAll, beforeAll, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { clinics, tutors } from "../../src/db/schema";
import { idempotency } from "../../src/http/idempotency";
import { ManualClock } from "../../src/lib/clock";
import { createTestDatabase, type TestDatabase } from "../helpers/database";

const CLINIC = "01900000-0000-7000-8000-0000000000c1";
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  const at = new Date("2026-01-01T00:00:00Z");
  await database.db.insert(clinics).values({ id: CLINIC, name: "Probe", created_at: at, updated_at: at });
});
afterAll(() => database.destroy());

/** A route that writes a tutor and answers with whatever `answer` gives. */
function probeApp(answer: () => unknown) {
  const clock = new ManualClock();
  return new Elysia().use(idempotency({ db: database.db, clock })).post("/probe", ({ body, idempotently }) =>
    idempotently(CLINIC, body, async (db) => {
      const now = clock.now();
      await db.insert(tutors).values({ id: Bun.randomUUIDv7(), clinic_id: CLINIC, name: "Written once", created_at: now, updated_at: now });
      return answer();
    }),
  );
}

const post = (app: ReturnType<typeof probeApp>, key: string) =>
  app.handle(new Request("http://localhost/probe", { method: "POST", headers: { "content-type": "application/json", "idempotency-key": key }, body: "{}" }));
const written = async () => (await database.query<{ n: number }>("select count(*)::int as n from tutors where clinic_id = $1", [CLINIC]))[0]!.n;

test("the write and its stored response commit together: if the response cannot be stored, nothing is written and the key is free", async () => {
  const key = Bun.randomUUIDv7();
  // A BigInt cannot be stored as JSON: the same position as a process dying after the write.
  const failing = await post(probeApp(() => ({ amount: 10n })), key);
  expect(failing.status, await failing.text()).toBeGreaterThanOrEqual(500);
  expect(await written()).toBe(0);
  expect(await database.query("select key from idempotency_keys where clinic_id = $1", [CLINIC])).toEqual([]);

  const retried = await post(probeApp(() => ({ amount: 10 })), key);
  expect(retried.status, await retried.clone().text()).toBe(201);
  const replayed = await post(probeApp(() => ({ amount: 10 })), key);
  expect(replayed.status).toBe(200);
  expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  expect(await replayed.json()).toEqual({ amount: 10 });
  expect(await written()).toBe(1);
});
