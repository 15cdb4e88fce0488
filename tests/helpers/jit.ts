/**
 * The test run's processes (the workers, every server and CLI they start) run JavaScriptCore
 * without its two optimizing tiers: FTL for JavaScript and OMG for WebAssembly. A test process
 * lives seconds and runs most code a few times; those compilers spend more CPU on their
 * background threads than their code wins back. Measured on the suite (docs/benchmarks.md): a
 * quarter less CPU for an embedded database created from nothing, a sixth less for in-process
 * files, the same wall time for each. The service itself runs with every tier, as shipped.
 *
 * These are JavaScriptCore debugging options (Bun passes `BUN_JSC_*` through, with no promise to
 * keep them): a Bun that no longer knows one refuses to start with it, so each is kept only if
 * this Bun starts with it.
 */
const WANTED = { BUN_JSC_useFTLJIT: "0", BUN_JSC_useOMGJIT: "0" };

function accepted(): Record<string, string> {
  const probe = Bun.spawnSync([process.execPath, "-e", ""], { env: { PATH: process.env.PATH ?? "", ...WANTED }, stdout: "ignore", stderr: "ignore" });
  return probe.exitCode === 0 ? WANTED : {};
}

export const SHORT_RUN_JIT_ENV: Record<string, string> = accepted();
