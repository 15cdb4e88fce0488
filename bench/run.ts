/**
 * `bun run bench`: runs every bench/*.bench.ts in its own process, one after another, and
 * prints their tables. Set DATABASE_URL to run them against PostgreSQL.
 */
import { Glob } from "bun";

const files = [...new Glob("*.bench.ts").scanSync({ cwd: import.meta.dir })].sort();
const machine = `${navigator.hardwareConcurrency} cores, bun ${Bun.version}, ${process.platform}/${process.arch}`;
console.log(`# Benchmarks — ${new Date().toISOString()} — ${machine}`);
let failed = 0;
for (const file of files) {
  const child = Bun.spawn(["bun", `${import.meta.dir}/${file}`], { stdout: "inherit", stderr: "inherit", env: process.env });
  if ((await child.exited) !== 0) {
    failed++;
    console.error(`!! ${file} failed`);
  }
}
process.exit(failed ? 1 : 0);
