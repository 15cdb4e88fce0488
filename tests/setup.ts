import { setDefaultTimeout } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { POSTGRES_URL, preparePgliteTemplate, preparePostgresTemplate } from "./helpers/database";
import { TEST_WORKER_JIT_ENV } from "./helpers/jit";
import { inMemoryScratch } from "./helpers/scratch";

// `bun test` alone (the README's command: the whole suite) runs the files in parallel, one worker
// per core: Bun reads no setting for that from bunfig.toml, so the run starts itself again with
// those flags, the workers' JavaScriptCore tiers (helpers/jit.ts) and its scratch files in
// memory (helpers/scratch.ts), and exits with its status. Anything more on the command
// line (a file, a filter, --watch) runs as asked, in this process.
if (process.env.BUN_TEST_WORKER_ID === undefined && wholeSuiteAsked()) {
  const parallel = Bun.spawn([process.execPath, "test", "--parallel", "--no-isolate", "--timeout", "20000", `--timings=${join(import.meta.dir, "helpers/timings.json")}`], {
    cwd: join(import.meta.dir, ".."),
    env: { ...process.env, ...TEST_WORKER_JIT_ENV, ...inMemoryScratch() },
    stdio: ["inherit", "inherit", "inherit"],
  });
  process.exit(await parallel.exited);
}

/** True when this process is `bun test` with nothing after it (Linux shows its command line; elsewhere a run stays serial). */
function wholeSuiteAsked(): boolean {
  try {
    const commandLine = readFileSync("/proc/self/cmdline", "utf8").split("\0").filter(Boolean);
    return commandLine.length === 2 && commandLine[1] === "test";
  } catch {
    return false;
  }
}

// The migrated template every test database is cloned from is made (or found) here, before any
// test file runs, so no file's first hook pays for it: a PGlite data directory kept on disk, or a
// template database on the PostgreSQL server.
await (POSTGRES_URL ? preparePostgresTemplate() : preparePgliteTemplate());

// Password hashing at a test's cost. The service hashes with argon2id at Bun's defaults (64 MiB,
// two passes: about 60–120 ms of CPU a hash), which every registration, new member and password
// change in the in-process tests paid, over a thousand times a run. Here argon2id keeps its
// algorithm and format and takes 1 MiB and one pass (about 1 ms); verification reads the cost
// from the hash, so hashes made either way verify. Server processes the tests start are not
// affected: they hash at the service's real cost.
const hash = Bun.password.hash.bind(Bun.password);
Bun.password.hash = ((password: Parameters<typeof hash>[0], options?: Parameters<typeof hash>[1]) =>
  hash(password, options === "argon2id" || (typeof options === "object" && options.algorithm === "argon2id") ? { algorithm: "argon2id", memoryCost: 1024, timeCost: 1 } : options)) as typeof hash;

// Applies to the first test file only (bun scopes it per file; with --parallel, to each worker's
// first file). Slow tests elsewhere (spawning a server, a fresh embedded data directory) pass
// their own timeout.
setDefaultTimeout(60_000);
