import { setDefaultTimeout } from "bun:test";

// Building a database (PGlite boot, or a fresh PostgreSQL database and its migrations) takes seconds.
setDefaultTimeout(60_000);
