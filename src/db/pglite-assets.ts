// Imported as files so `bun build --compile` embeds them; a plain compile fails with ENOENT on
// /$bunfs/root/pglite.data because PGlite locates them next to its own module at run time.
import initdbWasm from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import pgliteData from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import pgliteWasm from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };

interface PgliteAssets {
  pgliteWasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
  fsBundle: Blob;
}

let compiled: Promise<PgliteAssets> | undefined;

/** PGlite's WebAssembly modules and file-system bundle, compiled once per process. */
export function pgliteAssets(): Promise<PgliteAssets> {
  compiled ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasm).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()),
    fsBundle: Bun.file(pgliteData),
  }))();
  return compiled;
}
