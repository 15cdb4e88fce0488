import { setDefaultTimeout } from "bun:test";

// Applies to the first test file only (bun scopes it per file): that file pays for building the
// migrated PGlite template (~5 s). Slow tests elsewhere (spawning a server, a fresh embedded
// data directory) pass their own timeout.
setDefaultTimeout(60_000);
