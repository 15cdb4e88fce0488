import { setDefaultTimeout } from "bun:test";
import { POSTGRES_URL, preparePgliteTemplate } from "./helpers/database";

// The migrated PGlite template every in-memory test database is cloned from is built here,
// before any test file runs, so no file's first hook pays for it (~5 s of migrations).
if (!POSTGRES_URL) await preparePgliteTemplate();

// Applies to the first test file only (bun scopes it per file). Slow tests elsewhere (spawning a
// server, a fresh embedded data directory) pass their own timeout.
setDefaultTimeout(60_000);
