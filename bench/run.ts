/**
 * `bun run bench`: runs every bench/*.bench.ts in its own process, one after another, and
 * prints their tables, then one table of the performance targets this run measured (each
 * benchmark reports its own through BENCH_TARGETS_FILE). Set DATABASE_URL to run them against
 * PostgreSQL; BENCH_ONLY=name,name runs only the benchmarks whose file names contain one of them.
 */
import { Glob } from "bun";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseLabel, printTable, reportedTargets } from "./lib/table";

const only = process.env.BENCH_ONLY?.split(",").filter(Boolean);
const files = [...new Glob("*.bench.ts").scanSync({ cwd: import.meta.dir })].sort().filter((file) => !only || only.some((name) => file.includes(name)));
const machine = `${navigator.hardwareConcurrency} cores, bun ${Bun.version}, ${process.platform}/${process.arch}`;
console.log(`# Benchmarks — ${new Date().toISOString()} — ${machine}`);
const targetsFile = join(tmpdir(), `vet-clinic-bench-targets-${process.pid}.jsonl`);
let failed = 0;
for (const [index, file] of files.entries()) {
  console.error(`bench: ${file} (${index + 1} of ${files.length})…`);
  const child = Bun.spawn(["bun", `${import.meta.dir}/${file}`], { stdout: "inherit", stderr: "inherit", env: { ...process.env, BENCH_TARGETS_FILE: targetsFile } });
  if ((await child.exited) !== 0) {
    failed++;
    console.error(`!! ${file} failed`);
  }
}
const targets = reportedTargets(targetsFile);
rmSync(targetsFile, { force: true });
printTable(
  `Performance targets measured by this run — ${databaseLabel()}`,
  targets.map((result) => ({ target: result.target, measured: result.measured, met: result.met ? "✓" : "**not met**" })),
);
process.exit(failed ? 1 : 0);
