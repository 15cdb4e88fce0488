/**
 * What not pipelining costs: a burst of small statements, all at once, on one instance's main
 * pool (10 connections) straight to PostgreSQL: `DATABASE_URL=postgres://… bun bench/pipelining.bench.ts`.
 * - pipelined: postgres.js as it comes (unnamed statements), which writes a statement on a
 *   connection still running others;
 * - one at a time: the service's handle on a connection not proven a session (as behind a
 *   transaction-mode pooler), where a statement outside a transaction waits for an idle connection;
 * - session: the same handle once proven a session (pipelined, statements kept prepared).
 * Statements with parameters and without (postgres.js never pipelines behind an unnamed statement
 * with parameters: it waits for its description first). Rounds interleave the three; medians.
 */
import postgres from "postgres";
import { openDatabase } from "../src/db/client";
import { POSTGRES_DIRECT_URL, POSTGRES_URL } from "../tests/helpers/database";
import { printTable } from "./lib/table";

const BURST = Number(process.env.BENCH_BURST ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);

if (!POSTGRES_URL || POSTGRES_DIRECT_URL) {
  console.log("\n(pipelining benchmark skipped: it needs DATABASE_URL=postgres://… to a server directly)");
  process.exit(0);
}

const raw = postgres(POSTGRES_URL, { max: 10, prepare: false, onnotice: () => {} });
const oneAtATime = await openDatabase({ databaseUrl: POSTGRES_URL, dataDir: "/nonexistent" });
const session = await openDatabase({ databaseUrl: POSTGRES_URL, dataDir: "/nonexistent" });
session.confirmSession();

type Run = (text: string, params: unknown[]) => Promise<unknown>;
const ways: [string, Run][] = [
  // Awaited in an async function, as the handle's `query` does, so that only the sending differs.
  ["pipelined (postgres.js as it comes)", async (text, params) => await raw.unsafe(text, params as never[])],
  ["one at a time (pooled or undecided)", (text, params) => oneAtATime.query(text, params)],
  ["session (pipelined, prepared)", (text, params) => session.query(text, params)],
];
const statements: [string, string, (i: number) => unknown[]][] = [
  ["with a parameter", "select $1::int + 1 as n", (i) => [i]],
  ["without parameters", "select 1 as one", () => []],
];

const burstMs = async (run: Run, text: string, params: (i: number) => unknown[]) => {
  const started = performance.now();
  await Promise.all(Array.from({ length: BURST }, (_, i) => run(text, params(i))));
  return performance.now() - started;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const timings = new Map<string, number[]>();
// A round to warm up (connections, types), not counted.
for (const [, text, params] of statements) for (const [, run] of ways) await burstMs(run, text, params);
for (let round = 0; round < ROUNDS; round++)
  for (const [label, text, params] of statements)
    for (const [way, run] of ways) {
      const key = `${label}\u0000${way}`;
      timings.set(key, [...(timings.get(key) ?? []), await burstMs(run, text, params)]);
    }

printTable(
  `A burst of ${BURST} statements at once on 10 connections, PostgreSQL direct (median of ${ROUNDS})`,
  [...timings].map(([key, ms]) => {
    const [label, way] = key.split("\u0000");
    return { statements: label!, way: way!, "ms per burst": median(ms).toFixed(1), "statements/s": Math.round(BURST / (median(ms) / 1000)) };
  }),
);

await Promise.all([raw.end({ timeout: 5 }), oneAtATime.close(), session.close()]);
