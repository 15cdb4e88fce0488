/**
 * query_database: guard time (parse + check + rewrite) over the legitimate suite, and the
 * guarded executor's throughput against the same rewritten SQL sent straight through the
 * driver, in the same run, on the database DATABASE_URL selects.
 */
import postgres from "postgres";
import { silentLogger } from "../src/lib/logger";
import { executeGuarded, ExecutorMemory } from "../src/modules/mcp/sql-guard/execute";
import { GuardVerdicts, guardSql } from "../src/modules/mcp/sql-guard/guard";

const verdicts = new GuardVerdicts();
const cachedGuard = (sql: string) => verdicts.check(sql);
import { createTestApp } from "../tests/helpers/app";
import { registerClinic } from "../tests/helpers/clinic";
import { createTestDatabase } from "../tests/helpers/database";
import { createKey, invoke } from "../tests/mcp/helpers";
import { CLINIC_A, seedTwoClinics } from "../tests/sql-guard/fixtures";
import { LEGIT_QUERIES } from "../tests/sql-guard/legit-queries";
import { percentile } from "./lib/load";
import { databaseLabel, printTable, reportTarget } from "./lib/table";

/** What the executor remembers between calls (an app owns one; so does this file). */
const memory = new ExecutorMemory();

const ROUNDS = Number(process.env.BENCH_GUARD_ROUNDS ?? 30);
/**
 * Rounds run before timing: the parser is 6 MB of generated JavaScript, and a served process
 * has long had its hot rules compiled by the optimizing tiers; a few rounds leave many of them
 * in the baseline compiler.
 */
const WARM_UP_ROUNDS = Number(process.env.BENCH_GUARD_WARM_UP ?? 30);
function time(guard: (sql: string) => unknown): number[] {
  const timings: number[] = [];
  for (let round = 0; round < ROUNDS + WARM_UP_ROUNDS; round++) {
    for (const [sql] of LEGIT_QUERIES) {
      const started = performance.now();
      guard(sql);
      if (round >= WARM_UP_ROUNDS) timings.push(performance.now() - started);
    }
  }
  return timings.sort((a, b) => a - b);
}
const cold = time(guardSql);
const cached = time(cachedGuard);

const database = await createTestDatabase();
await seedTwoClinics(database);
const statements = LEGIT_QUERIES.flatMap(([original]) => {
  const guarded = guardSql(original);
  return guarded.ok ? [{ original, sql: guarded.sql, bindsClinic: guarded.bindsClinic }] : [];
});
const limits = { timeoutMs: 5000, maxRows: 1000, maxCost: database.kind === "postgres" ? undefined : 1_000_000 };

const CONCURRENCY = 8;
const ROUNDS_PER_PATH = 3;
type Statement = (typeof statements)[number];
type Path = { label: string; run: (s: Statement) => Promise<unknown> };

async function queriesPerSecond(run: Path["run"], seconds: number): Promise<number> {
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
  return count / ((performance.now() - began) / 1000);
}

/** Paths take turns, round after round, and each reports its median: a noisy moment hits all alike. */
async function compare(paths: Path[], seconds = 2): Promise<{ path: string; "queries/s": number }[]> {
  for (const path of paths) for (const statement of statements) await path.run(statement); // warm-up: JIT, caches, prepared statements
  const samples = paths.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS_PER_PATH; round++) {
    for (const [i, path] of paths.entries()) samples[i]!.push(await queriesPerSecond(path.run, seconds));
  }
  return paths.map((path, i) => ({ path: path.label, "queries/s": Math.round(samples[i]!.sort((a, b) => a - b)[ROUNDS_PER_PATH >> 1]!) }));
}

// The baselines: the same rewritten statement as the service's own user, no transaction or role.
const asDirect = (s: Statement) => [s.sql.replaceAll("mcp_read.", "public."), s.bindsClinic ? [CLINIC_A] : []] as const;
const baselines: Path[] = [{ label: "rewritten SQL straight through the driver (its default: unprepared)", run: (s) => database.query(...asDirect(s)) }];
const driver = database.url ? postgres(database.url, { max: 10, onnotice: () => {} }) : undefined;
if (driver) baselines.push({ label: "rewritten SQL straight through the driver, prepared", run: (s) => driver.unsafe(asDirect(s)[0], [...asDirect(s)[1]], { prepare: true }) });

// The tool's own work (guard, then the executor), and the whole call through the app in process.
const t = await createTestApp({ database, config: { quotaFlushMs: 3_600_000 }, logger: silentLogger });
const key = await createKey(await registerClinic(t), { scopes: ["query"], rate_limit_per_day: 1_000_000 });
// The key is moved to the seeded clinic, whose quota is lifted out of the way.
await database.query("UPDATE api_keys SET clinic_id = $1 WHERE id = $2", [CLINIC_A, key.id]);
await database.query("UPDATE clinics SET plan = 'enterprise', burst_per_minute = 1000000000 WHERE id = $1", [CLINIC_A]);
const ours: Path[] = [
  {
    label: "query_database: guard + executor (READ ONLY txn, role, limits)",
    run: async ({ original }) => {
      const again = guardSql(original);
      if (!again.ok) throw new Error(`refused: ${original}`);
      await executeGuarded(database, memory, CLINIC_A, again.sql, again.bindsClinic, limits);
    },
  },
  {
    label: "POST /mcp/tools/query_database/invoke, in process (auth, quota, usage log, guard, executor)",
    run: async ({ original }) => {
      const response = await invoke(t, key.api_key, "query_database", { sql: original });
      if (response.status !== 200) throw new Error(`${response.status}: ${response.text}`);
    },
  },
];
const results = await compare([...baselines, ...ours]);
await driver?.end();
await t.close();
await database.destroy();

printTable(`SQL guard — ${LEGIT_QUERIES.length} legitimate queries × ${ROUNDS} rounds`, [
  { measure: "guard p50, every statement parsed", value: `${percentile(cold, 50).toFixed(3)} ms` },
  { measure: "guard p99, every statement parsed", value: `${percentile(cold, 99).toFixed(3)} ms` },
  { measure: "guard p50, repeated statement (verdict cache)", value: `${percentile(cached, 50).toFixed(4)} ms` },
  { measure: "guard p99, repeated statement (verdict cache)", value: `${percentile(cached, 99).toFixed(4)} ms` },
]);
printTable(`query_database vs direct driver — ${databaseLabel()}, ${CONCURRENCY} concurrent callers, median of ${ROUNDS_PER_PATH} interleaved rounds`, results);
const rate = (label: string) => results.find((r) => r.path === label)!["queries/s"];
const ratios = baselines.map((b) => `vs ${b.label.replace("rewritten SQL straight through the driver", "driver")}: ${ours.map((o) => `${((rate(o.label) / rate(b.label)) * 100).toFixed(1)} %`).join(" / ")}`);
console.log(`\nratio (guard + executor / whole call in process), target ≥ 70 %: ${ratios.join("; ")}. Guard p50 target < 0.5 ms.`);
const guardP50 = percentile(cold, 50);
reportTarget({ target: "guard p50 ≤ 0.3 ms over the legitimate suite, every statement parsed", measured: `${guardP50.toFixed(3)} ms`, met: guardP50 <= 0.3 });
