import { createApp, listenerOptions } from "../app";
import { loadConfig, type Config } from "../config";
import { beginOpeningDatabase } from "../db/client";
import { systemClock } from "../lib/clock";
import { createLogger } from "../lib/logger";
import { MemoryGovernor } from "../lib/memory-governor";
import { MigrationFailedError } from "./startup-errors";
import { isLoopbackHost } from "../http/rate-limit";
import { hasAnyUser } from "../modules/auth/service";
import { verifySecretsKey } from "./secrets";

/** How long shutdown waits for in-flight requests before closing anyway. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Where start-up time goes, said in the "listening" line: the process until serving begins
 * (runtime and code loaded; for `demo`, the seed too), building the app (while the embedded
 * database starts), the rest of opening the database (the embedded one compiles and starts
 * PostgreSQL), checking migrations, listening.
 */
class StartupPhases {
  private readonly ms: Record<string, number> = { process: Math.round(performance.now()) };
  private last = performance.now();

  end(phase: string): Record<string, number> {
    const now = performance.now();
    this.ms[phase] = Math.round(now - this.last);
    this.last = now;
    return { ...this.ms, total: Math.round(now) };
  }
}

/**
 * The start-up warning for a listener others can reach over plain http (no https PUBLIC_URL in
 * front): the LAN's other machines see passwords and tokens in clear.
 */
export function plainHttpWarning(config: Pick<Config, "host" | "publicUrl">): string | null {
  if (isLoopbackHost(config.host) || config.publicUrl?.startsWith("https:")) return null;
  return "sessions work, but passwords cross the LAN in clear: put TLS in front, see Deployment";
}

/** Serves: read the environment, migrate, listen, and stop cleanly on SIGINT/SIGTERM. */
export async function serve(options: { onListening?: (baseUrl: string) => void; compiledPostgres?: Promise<WebAssembly.Module> } = {}): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const phases = new StartupPhases();
  const opening = await beginOpeningDatabase({ databaseUrl: config.databaseUrl, databaseDirectUrl: config.databaseDirectUrl, dataDir: config.dataDir, poolSizes: config.poolSizes, compiledPostgres: options.compiledPostgres });
  const database = opening.database;
  // The app is built while the embedded database starts (its compile runs on another thread and
  // the app needs only the handle); whatever it asks the database meanwhile waits for it.
  const { app, context } = createApp({ database, config, clock: systemClock, logger });
  phases.end("app");
  // A database that cannot start has freed its data directory; the app's background work waits
  // on it forever and the process exits with the error.
  await opening.ready;
  phases.end("database");
  await database.migrate().catch(async (error) => {
    await context.lifecycle.beforeClose().catch(() => {});
    await database.close().catch(() => {});
    throw new MigrationFailedError(database.location, error);
  });
  // A key that does not open this database's secrets stops the start here, with one line that says so.
  await verifySecretsKey(database, config, systemClock).catch(async (error) => {
    await context.lifecycle.beforeClose().catch(() => {});
    await database.close().catch(() => {});
    throw error;
  });
  phases.end("migrations");
  const memory = new MemoryGovernor({ limitBytes: config.memorySoftLimitMb * 1024 * 1024 });
  // Installed before listening, so a signal that arrives as soon as "listening" is printed is handled.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    context.lifecycle.draining = true;
    logger.announce("shutting down", { signal });
    // Stop accepting and let in-flight requests finish (bounded), then flush and close.
    const drained = app.server ? app.stop(false).then(() => true) : Promise.resolve(true);
    const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), DRAIN_TIMEOUT_MS).unref());
    if (!(await Promise.race([drained, timedOut]))) {
      logger.warn("in-flight requests did not finish in time; closing", { timeout_ms: DRAIN_TIMEOUT_MS });
      await app.stop(true);
    }
    memory.stop();
    await context.lifecycle.beforeClose();
    await database.close();
    logger.announce("stopped", { signal });
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  try {
    app.listen(listenerOptions(config));
  } catch (error) {
    await context.lifecycle.beforeClose().catch(() => {});
    await database.close().catch(() => {});
    throw error;
  }
  const port = app.server?.port ?? config.port;
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const listenUrl = `http://${shownHost}:${port}`;
  // Clients reach the service at PUBLIC_URL when it is set (behind a proxy, or a name other than
  // the bind address): every printed URL is that one, so an MCP client given it finds the same
  // resource the metadata names.
  const baseUrl = config.publicUrl ?? listenUrl;
  // Before "listening", so whoever waits for that line has the link too.
  if (!(await hasAnyUser(context.services))) {
    // The first run: whoever has the server's output (its operator) creates the first account.
    const setupUrl = `${baseUrl}/setup#${context.setup.issue()}`;
    logger.announce("no account exists yet: open the setup link to create the clinic and its owner (valid 1 hour, once)", { setup_url: setupUrl });
    process.stdout.write(`\nFirst run: open ${setupUrl}\nto create the clinic and its owner (valid for 1 hour, once; a new link is printed at each start until then).\n\n`);
  }
  logger.announce("listening", {
    listen: listenUrl,
    base_url: baseUrl,
    console_url: `${baseUrl}/`,
    api_url: `${baseUrl}/api/v1`,
    mcp_url: `${baseUrl}/mcp`,
    docs_url: `${baseUrl}/docs`,
    database: database.kind,
    data: database.location,
    startup_ms: phases.end("listen"),
  });
  const warning = plainHttpWarning(config);
  if (warning) logger.warn(warning, { host: config.host, port });
  // After listening, so a large table's first ANALYZE never delays /ready.
  context.statistics.start();
  // After migrating: webhook delivery and the morning's due events read the new tables.
  context.webhooks.start();
  context.reminders.start();
  memory.start();
  options.onListening?.(baseUrl);
}
