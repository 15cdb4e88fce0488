// Imported as files so `bun build --compile` embeds them; a plain compile fails with ENOENT on
// /$bunfs/root/pglite.data because PGlite locates them next to its own module at run time.
import initdbWasm from "../../node_modules/@electric-sql/pglite/dist/initdb.wasm" with { type: "file" };
import pgliteData from "../../node_modules/@electric-sql/pglite/dist/pglite.data" with { type: "file" };
import pgliteWasm from "../../node_modules/@electric-sql/pglite/dist/pglite.wasm" with { type: "file" };
import pgTrgmBundle from "../../node_modules/@electric-sql/pglite/dist/pg_trgm.tar.gz" with { type: "file" };
import hstoreBundle from "../../node_modules/@electric-sql/pglite/dist/hstore.tar.gz" with { type: "file" };
import btreeGinBundle from "../../node_modules/@electric-sql/pglite/dist/btree_gin.tar.gz" with { type: "file" };
import btreeGistBundle from "../../node_modules/@electric-sql/pglite/dist/btree_gist.tar.gz" with { type: "file" };
import type { Extension } from "@electric-sql/pglite";
import { existsSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

export interface PgliteAssets {
  /**
   * PostgreSQL's module, or its compile still under way: PGlite (patched, see `patches/`) awaits
   * it only when it instantiates PostgreSQL, so its own start-up overlaps the compile.
   */
  pgliteWasmModule: WebAssembly.Module | Promise<WebAssembly.Module>;
  /** Only needed to create a data directory (initdb); an existing one starts without it. */
  initdbWasmModule?: WebAssembly.Module;
  fsBundle: Blob;
  extensions: { pg_trgm: Extension; hstore: Extension; btree_gin: Extension; btree_gist: Extension };
}

/**
 * An extension PGlite loads from the bundle it ships. PGlite streams the bundle with
 * fs.createReadStream, which cannot read inside a compiled binary, so there it is first copied to
 * a temporary file.
 */
function bundledExtension(name: string, bundle: string): Extension {
  return {
    name,
    setup: async () => {
      if (!bundle.startsWith("/$bunfs/")) return { bundlePath: new URL(`file://${bundle}`) };
      const copy = join(tmpdir(), `vet-clinic-${basename(bundle)}`);
      if (!existsSync(copy)) {
        // Written aside and renamed, so a concurrent start never reads half a file.
        const partial = `${copy}.${process.pid}`;
        await Bun.write(partial, Bun.file(bundle));
        renameSync(partial, copy);
      }
      return { bundlePath: new URL(`file://${copy}`) };
    },
  };
}

/** pg_trgm: trigram indexes for name search. */
const pgTrgm = bundledExtension("pg_trgm", pgTrgmBundle);
/** hstore: the event log's trigger compares a row's old and new fields with it (one C operator, no query). */
const hstore = bundledExtension("hstore", hstoreBundle);
/** btree_gin: a name search's GIN index holds the clinic beside the trigrams, so it reads only that clinic's matches. */
const btreeGin = bundledExtension("btree_gin", btreeGinBundle);
/** btree_gist: the exclusion constraints that keep a vet's or a room's visits apart compare the vet (=) and the time (&&) in one GiST index. */
const btreeGist = bundledExtension("btree_gist", btreeGistBundle);

/**
 * Starts compiling PostgreSQL's WebAssembly, which JavaScriptCore does on its compiler threads:
 * started first thing (src/index.ts), it overlaps the loading of the rest of the code instead of
 * following it. A command that never opens the embedded database leaves it unused.
 */
export function compilePostgres(): Promise<WebAssembly.Module> {
  const compiling = Bun.file(pgliteWasm)
    .arrayBuffer()
    .then((bytes) => WebAssembly.compile(bytes));
  // Whoever opens the database awaits it and sees a failure; nobody may, so none goes unhandled here.
  compiling.catch(() => {});
  return compiling;
}

/**
 * PGlite's WebAssembly modules and file-system bundle. Compiling PostgreSQL takes about 130 ms
 * and initdb about 60 ms more, so initdb is compiled only when a data directory is to be created.
 * A caller that opens many databases (the tests) compiles them once and hands them to each
 * `openDatabase`.
 */
export async function loadPgliteAssets(options: { initdb: boolean; compiledPostgres?: Promise<WebAssembly.Module> } = { initdb: true }): Promise<PgliteAssets> {
  // Not awaited: PGlite takes the compile as it goes (initdb's, when needed, runs beside it).
  const pgliteWasmModule = options.compiledPostgres ?? compilePostgres();
  const initdbWasmModule = options.initdb ? await WebAssembly.compile(await Bun.file(initdbWasm).arrayBuffer()) : undefined;
  return {
    pgliteWasmModule,
    ...(initdbWasmModule ? { initdbWasmModule } : {}),
    fsBundle: Bun.file(pgliteData),
    extensions: { pg_trgm: pgTrgm, hstore, btree_gin: btreeGin, btree_gist: btreeGist },
  };
}
