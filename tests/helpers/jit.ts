/**
 * JavaScriptCore's optimizing tiers in the test run, measured on the suite (docs/benchmarks.md).
 *
 * - The servers and CLIs the tests start live seconds and run most code a few times: they run
 *   without both optimizing tiers, FTL for JavaScript and OMG for WebAssembly, whose background
 *   compiles cost more than they win back there (an embedded database created from nothing:
 *   about 6 s of CPU → 4 s).
 * - The test workers live the whole run and spend much of it inside PGlite's WebAssembly (a
 *   filled clinic, migrations, restores), where OMG's code pays for itself (two such files: 25.1 s
 *   of CPU without it, 21.6 s with it); they run without FTL only.
 *
 * The service itself runs with every tier, as shipped. These are JavaScriptCore debugging
 * options (Bun passes `BUN_JSC_*` through, with no promise to keep them): a Bun that no longer
 * knows one refuses to start with it, so they are used only if this Bun starts with them.
 */
const WORKERS = { BUN_JSC_useFTLJIT: "0" };
const SHORT_RUNS = { ...WORKERS, BUN_JSC_useOMGJIT: "0" };

const probe = Bun.spawnSync([process.execPath, "-e", ""], { env: { PATH: process.env.PATH ?? "", ...SHORT_RUNS }, stdout: "ignore", stderr: "ignore" });
const known = probe.exitCode === 0;

/** For the test workers (tests/setup.ts starts them with it). */
export const TEST_WORKER_JIT_ENV: Record<string, string> = known ? WORKERS : {};
/** For every server and CLI process a test starts. */
export const SHORT_RUN_JIT_ENV: Record<string, string> = known ? SHORT_RUNS : {};
