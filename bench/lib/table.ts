import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** Prints rows as a Markdown table, so the output can go into the README as it is. */
export function printTable(title: string, rows: Record<string, string | number>[]): void {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]!);
  console.log(`\n### ${title}\n`);
  console.log(`| ${columns.join(" | ")} |`);
  console.log(`|${columns.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${columns.map((c) => String(row[c] ?? "")).join(" | ")} |`);
}

export const databaseLabel = () => (process.env.DATABASE_URL?.startsWith("postgres") ? "PostgreSQL" : "embedded PGlite");

/** One of the performance targets (issue #20) as a benchmark measured it. */
export interface TargetResult {
  target: string;
  measured: string;
  met: boolean;
}

/**
 * Hands a target's figure to `bun run bench` (bench/run.ts), which closes the run with one table
 * of every target it measured: appended to the file BENCH_TARGETS_FILE names, one JSON line each.
 * A benchmark run on its own prints its own tables only.
 */
export function reportTarget(result: TargetResult): void {
  const file = process.env.BENCH_TARGETS_FILE;
  if (file) appendFileSync(file, `${JSON.stringify(result)}\n`);
}

/** The targets a run's benchmarks reported, in order. */
export function reportedTargets(file: string): TargetResult[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TargetResult);
}
