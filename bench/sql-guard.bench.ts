/**
 * query_database: guard time (parse + check + rewrite) over the legitimate suite, and the
 * guarded executor's throughput against the same rewritten SQL sent straight through the
 * driver, in the same run, on the database DATABASE_URL selects.
 */
import { executeGuarded } from "../src/modules/mcp/sql-guard/execute";
import { checkAndRewrite, guardSql } from "../src/modules/mcp/sql-guard/guard";
import { createTestDatabase } from "../tests/helpers/database";
import { CLINIC_A, seedTwoClinics } from "../tests/sql-guard/fixtures";
import { LEGIT_QUERIES } from "../tests/sql-guard/legit-queries";
import { percentile } from "./lib/load";
import { databaseLabel, printTable } from "./lib/table";

const ROUNDS = Number(process.env.BENCH_GUARD_ROUNDS ?? 30);
function time(guard: (sql: string) => unknown): number[] {
  const timings: number[] = [];
  for (let round = 0; round < ROUNDS + 3; round++) {
    for (const [sql] of LEGIT_QUERIES) {
      const started = performance.now();
      guard(sql);
      if (round >= 3) timings.push(performance.now() - started); // the first rounds warm the JIT
    }
  }
  return timings.sort((a, b) => a - b);
}
const cold = time(checkAndRewrite);
const cached = time(guardSql);

const database = await createTestDatabase();
await seedTwoClinics(database);
const statements = LEGIT_QUERIES.flatMap(([original]) => {
  const guarded = guardSql(original);
  return guarded.ok ? [{ original, sql: guarded.sql, bindsClinic: guarded.bindsClinic }] : [];
});
const limits = { timeoutMs: 5000, maxRows: 1000, maxCost: database.kind === "postgres" ? undefined : 1_000_000 };

const CONCURRENCY = 8;
async function throughput(label: string, run: (s: (typeof statements)[number]) => Promise<unknown>, seconds = 3) {
  const deadline = performance.now() + seconds * 1000;
  let count = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = worker; performance.now() < deadline; i++) {
        await run(statements[i % statements.length]!);
        count++;
      }
    }),
  );
  return { label, qps: Math.round(count / ((performance.now() - began) / 1000)) };
}

// Direct: the same rewritten statement, as the service's own user, no transaction or role.
const direct = await throughput("rewritten SQL straight through the driver", (s) =>
  database.query(s.sql.replaceAll("mcp_read.", "public."), s.bindsClinic ? [CLINIC_A] : []),
);
const guarded = await throughput("query_database executor (guard + READ ONLY txn + role + limits)", async ({ original }) => {
  const again = guardSql(original); // the guard runs on every call, as in the tool
  if (!again.ok) throw new Error(`refused: ${original}`);
  await executeGuarded(database, CLINIC_A, again.sql, again.bindsClinic, limits);
});
await database.destroy();

printTable(`SQL guard — ${LEGIT_QUERIES.length} legitimate queries × ${ROUNDS} rounds`, [
  { measure: "guard p50, every statement parsed", value: `${percentile(cold, 50).toFixed(3)} ms` },
  { measure: "guard p99, every statement parsed", value: `${percentile(cold, 99).toFixed(3)} ms` },
  { measure: "guard p50, repeated statement (verdict cache)", value: `${percentile(cached, 50).toFixed(4)} ms` },
  { measure: "guard p99, repeated statement (verdict cache)", value: `${percentile(cached, 99).toFixed(4)} ms` },
]);
printTable(`query_database vs direct driver — ${databaseLabel()}, ${CONCURRENCY} concurrent callers`, [
  { path: direct.label, "queries/s": direct.qps },
  { path: guarded.label, "queries/s": guarded.qps },
]);
console.log(`\nratio: ${((guarded.qps / direct.qps) * 100).toFixed(1)} % of the direct driver's throughput (target ≥ 70 %); guard p50 target < 0.5 ms`);
