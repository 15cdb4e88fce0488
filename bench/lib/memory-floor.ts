/**
 * The embedded server's memory floor, measured step by step in a process of its own (run with
 * --smol, as the binary runs): Bun alone, with PostgreSQL's WebAssembly compiled, and with PGlite
 * opened on the data directory given as the argument, before the service's own code runs (importing the database client loads its drivers and
 * schema, a few megabytes, counted in the first figure).
 * Prints one JSON line of resident megabytes. With `--import MODULE`, instead: what importing that
 * one module adds to Bun alone (`{mb}`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EMBEDDED_START_PARAMS, launchPglite } from "../../src/db/client";
import { loadPgliteAssets } from "../../src/db/pglite-assets";

const residentMb = () => {
  Bun.gc(true);
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024);
};

if (process.argv[2] === "--import") {
  const before = residentMb();
  await import(process.argv[3]!);
  console.log(JSON.stringify({ mb: residentMb() - before }));
  process.exit(0);
}

const bun = residentMb();
const assets = await loadPgliteAssets({ initdb: false });
await assets.pgliteWasmModule;
const compiled = residentMb();
const { client, ready } = launchPglite(join(process.argv[2]!, "pg"), assets, { startParams: EMBEDDED_START_PARAMS });
await ready;
const opened = residentMb();
await client.close();
console.log(JSON.stringify({ bun, compiled, opened }));
