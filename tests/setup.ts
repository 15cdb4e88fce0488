import { setDefaultTimeout } from "bun:test";
import { POSTGRES_URL, preparePgliteTemplate, preparePostgresTemplate } from "./helpers/database";

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
