/**
 * The quota's fast path, before and after one quota across instances: admissions for a key far
 * from its limits (1,000,000 a day, no burst cap to speak of), in process, on the database
 * DATABASE_URL selects. "before" is quotas.ts as it was at the commit before the grants (taken
 * from git into a temporary file beside today's, so both run in this one process over one
 * database); "after" is today's. Each row: time per admission and database statements per
 * admission (statements counted on PGlite only).
 */
import { PGlite } from "@electric-sql/pglite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ManualClock } from "../src/lib/clock";
import { newId } from "../src/lib/crypto";
import { QuotaBook } from "../src/modules/mcp/quotas";
import { createTestDatabase } from "../tests/helpers/database";
import { databaseLabel, printTable } from "./lib/table";

const ADMISSIONS = Number(process.env.BENCH_QUOTA_ADMISSIONS ?? 200_000);
const ROOT = join(import.meta.dir, "..");

/**
 * quotas.ts at BENCH_QUOTA_BASELINE, or at the parent of the commit that brought the grants in;
 * undefined when neither is in this checkout's history (then only "after" is measured).
 */
function baselineSource(): { ref: string; source: string } | undefined {
  const git = (...args: string[]) => {
    const run = Bun.spawnSync(["git", ...args], { cwd: ROOT });
    return run.exitCode === 0 ? run.stdout.toString().trim() : "";
  };
  const introduced = git("log", "-1", "--format=%H", "--grep=^Quota: one quota across instances");
  const ref = process.env.BENCH_QUOTA_BASELINE ?? (introduced ? `${introduced}^` : "");
  const source = ref ? git("show", `${ref}:src/modules/mcp/quotas.ts`) : "";
  return source ? { ref: git("rev-parse", "--short", ref), source } : undefined;
}

let statements = 0;
for (const method of ["query", "exec", "transaction"] as const) {
  const prototype = PGlite.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = prototype[method]!;
  prototype[method] = function (this: PGlite, ...args: unknown[]) {
    statements++;
    return original.apply(this, args);
  };
}

interface Admitting {
  admitOnce(principal: { id: string; rateLimitPerDay: number; burstPerMinute: number }): Promise<boolean>;
}

async function measure(label: string, book: Admitting): Promise<Record<string, string | number>> {
  const principal = { id: newId(), rateLimitPerDay: 1_000_000, burstPerMinute: 1_000_000_000 };
  for (let i = 0; i < 2000; i++) await book.admitOnce(principal);
  const before = statements;
  const started = performance.now();
  let admitted = 0;
  for (let i = 0; i < ADMISSIONS; i++) if (await book.admitOnce(principal)) admitted++;
  const elapsed = performance.now() - started;
  return {
    quota: label,
    admissions: admitted,
    "µs per admission": ((elapsed * 1000) / ADMISSIONS).toFixed(2),
    "statements per admission": process.env.DATABASE_URL?.startsWith("postgres") ? "(PGlite only)" : ((statements - before) / ADMISSIONS).toFixed(4),
  };
}

if (import.meta.main) {
  const database = await createTestDatabase();
  const clock = new ManualClock();
  const previous = baselineSource();
  const baselineFile = join(ROOT, "src/modules/mcp", `.quotas-baseline-${process.pid}.ts`);
  try {
    const rows: Record<string, string | number>[] = [];
    // One ms per admission on the clock, so the burst log prunes as it would under real traffic.
    if (previous) {
      writeFileSync(baselineFile, previous.source);
      const { QuotaBook: BaselineBook } = (await import(baselineFile)) as { QuotaBook: new (db: unknown, clock: unknown) => { prepare(id: string): Promise<void>; admit(key: unknown): { admitted: boolean } } };
      const baseline = new BaselineBook(database.db, clock);
      rows.push(
        await measure(`before (${previous.ref}): prepare + synchronous admit`, {
          async admitOnce(principal) {
            clock.advance(1);
            await baseline.prepare(principal.id);
            return baseline.admit(principal).admitted;
          },
        }),
      );
    } else {
      console.log("(no baseline: set BENCH_QUOTA_BASELINE to a commit before the quota grants to compare)");
    }
    const current = new QuotaBook(database, clock);
    rows.push(
      await measure("after: admit from the instance's grant", {
        async admitOnce(principal) {
          clock.advance(1);
          return (await current.admit(principal)).admitted;
        },
      }),
    );
    printTable(`Quota fast path, a key far from its limits — ${databaseLabel()}, ${ADMISSIONS} admissions each`, rows);
  } finally {
    rmSync(baselineFile, { force: true });
    await database.destroy();
  }
}
