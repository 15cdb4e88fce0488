import { openDatabase, type Database, type OpenDatabaseOptions } from "../db/client";
import { MigrationFailedError } from "./startup-errors";

/** What src/index.ts started before loading the commands: PostgreSQL's compile, for the embedded database. */
export interface EarlyStart {
  compiledPostgres?: Promise<WebAssembly.Module>;
}

/**
 * Opens a database for one command and closes it after, whatever happens. `migrate` brings it
 * to this version's schema first (a restore or a move loads into an older one itself).
 */
export async function withDatabase<T>(options: OpenDatabaseOptions & { migrate?: boolean }, work: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(options);
  try {
    if (options.migrate) {
      await database.migrate().catch((error) => {
        throw new MigrationFailedError(database.location, error);
      });
    }
    return await work(database);
  } finally {
    await database.close();
  }
}
