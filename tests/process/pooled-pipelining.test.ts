/**
 * Bursts through a transaction-mode pooler that does not follow pipelined statements (Debian's
 * PgBouncer 1.18, a server pool of 2): a statement sent on a connection behind another that
 * ends the transaction loses its answer there (the pooler hands the server back when the
 * first one ends), so it would wait for ever. Every statement of a burst must answer, quickly.
 * Started here (scripts/pgbouncer-for-tests.sh) in front of the test's PostgreSQL server; runs
 * when DATABASE_URL is a PostgreSQL URL and pgbouncer is installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openDatabase, rowsOf, type Database } from "../../src/db/client";
import { createTestDatabase, POSTGRES_URL, type TestDatabase, urlForDatabase } from "../helpers/database";

const SCRIPT = join(import.meta.dir, "../../scripts/pgbouncer-for-tests.sh");
const havePgbouncer = Bun.which("pgbouncer") !== null;
/** Statements in flight at once, for one instance's pools (10 + 4 connections over 2 servers). */
const BURST = 400;
const ROUNDS = 5;
/** A burst answers in well under a second; one lost answer would keep it waiting for ever. */
const BURST_DEADLINE_MS = 15_000;

let pg: TestDatabase;
let pooler: { port: number; dir: string } | undefined;
let database: Database | undefined;

/** Every kind of statement an instance sends outside and inside transactions, mixed. */
function statement(db: Database, i: number): Promise<unknown> {
  switch (i % 5) {
    case 0:
      return db.query("select 1 as one");
    case 1:
      return db.query("select $1::int as n", [i]);
    case 2:
      return db.db.execute(sql`select count(*) as n from tutors where name <> ${`nobody ${i}`}`);
    case 3:
      return db.db.transaction(async (tx) => rowsOf(await tx.execute(sql`select ${i}::int as n`)));
    default:
      return db.readOnlyBatch([{ text: "select $1::int as n", params: [String(i)] }, { text: "select 2 as two", params: [] }]);
  }
}

async function burst(db: Database): Promise<number> {
  let answered = 0;
  const all = Promise.all(Array.from({ length: BURST }, (_, i) => statement(db, i).then(() => answered++)));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"late">((done) => (timer = setTimeout(() => done("late"), BURST_DEADLINE_MS)));
  try {
    const outcome = await Promise.race([all, deadline]);
    expect(outcome === "late" ? `${BURST - answered} of ${BURST} statements still waiting after ${BURST_DEADLINE_MS} ms` : "all answered").toBe("all answered");
  } finally {
    clearTimeout(timer);
  }
  return answered;
}

describe.skipIf(!POSTGRES_URL || !havePgbouncer)("bursts through a transaction-mode PgBouncer (server pool of 2)", () => {
  beforeAll(async () => {
    pg = await createTestDatabase();
    const directUrl = pg.directUrl ?? pg.url!;
    const upstream = new URL(directUrl);
    const started = Bun.spawnSync(["bash", SCRIPT, "start"], {
      env: { ...process.env, PGBOUNCER_PORT: "", PGBOUNCER_UPSTREAM_HOST: upstream.hostname, PGBOUNCER_UPSTREAM_PORT: upstream.port || "5432", PGBOUNCER_POOL_SIZE: "2" },
    });
    const out = started.stdout.toString();
    if (started.exitCode !== 0) throw new Error(`pgbouncer did not start: ${out}${started.stderr.toString()}`);
    pooler = { port: Number(/PGBOUNCER_PORT=(\d+)/.exec(out)![1]), dir: /PGBOUNCER_DIR=(\S+)/.exec(out)![1]! };
    const pooledUrl = urlForDatabase(`postgres://postgres@127.0.0.1:${pooler.port}/`, upstream.pathname.slice(1));
    database = await openDatabase({ databaseUrl: pooledUrl, databaseDirectUrl: directUrl, dataDir: "/nonexistent" });
  }, 60_000);
  afterAll(async () => {
    // A hung statement keeps its connection: closing gives up on it after its timeout.
    await database?.close().catch(() => {});
    await pg?.destroy();
    if (pooler) Bun.spawnSync(["bash", SCRIPT, "stop", pooler.dir]);
  }, 30_000);

  test(`${ROUNDS} bursts of ${BURST} concurrent statements, with and without parameters, in and out of transactions: all answer`, async () => {
    expect(database!.connectionMode).toBe("pooled");
    for (let round = 0; round < ROUNDS; round++) expect(await burst(database!)).toBe(BURST);
  }, ROUNDS * BURST_DEADLINE_MS + 10_000);
});
