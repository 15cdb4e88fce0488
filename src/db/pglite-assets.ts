// Imported as files so `bun build --compile` embeds them; a plain compile fails with ENOENT on
// /$bunfs/root/pglite.data because PGlite locates them next to its own module at run time.
import initdbWasm from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import pgliteData from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import pgliteWasm from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };
import pgTrgmBundle from "../../node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz" with { type: "file" };
import type { Extension } from "@electric-sql/pglite";

interface PgliteAssets {
  pgliteWasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
  fsBundle: Blob;
  extensions: { pg_trgm: Extension };
}

/** pg_trgm (trigram indexes for name search), from the embedded bundle rather than PGlite's own path. */
const pgTrgm: Extension = { name: "pg_trgm", setup: async () => ({ bundlePath: new URL(`file://${pgTrgmBundle}`) }) };

let compiled: Promise<PgliteAssets> | undefined;

/** PGlite's WebAssembly modules and file-system bundle, compiled once per process. */
export function pgliteAssets(): Promise<PgliteAssets> {
  compiled ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasm).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()),
    fsBundle: Bun.file(pgliteData),
    extensions: { pg_trgm: pgTrgm },
  }))();
  return compiled;
}
