import { createApp } from "./app";
import { loadConfig } from "./config";
import { openDatabase } from "./db/client";
import { systemClock } from "./lib/clock";
import { createLogger } from "./lib/logger";

/** Starts the service: read the environment, migrate, listen, and stop cleanly on SIGINT/SIGTERM. */
async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await database.migrate();
  const { app, context } = createApp({ database, config, clock: systemClock, logger });
  app.listen({ port: config.port, hostname: config.host, maxRequestBodySize: config.maxBodyBytes });
  const port = app.server?.port ?? config.port;
  const shownHost = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const baseUrl = `http://${shownHost}:${port}`;
  logger.announce("listening", {
    base_url: baseUrl,
    api_url: `${baseUrl}/api/v1`,
    mcp_url: `${baseUrl}/mcp`,
    docs_url: `${baseUrl}/docs`,
    database: database.kind,
    data: database.location,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    context.lifecycle.draining = true;
    logger.announce("shutting down", { signal });
    // Stop accepting, let in-flight requests finish, then close the database.
    await app.stop(false);
    await context.lifecycle.beforeClose();
    await database.close();
    logger.announce("stopped", { signal });
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((error) => {
  process.stderr.write(JSON.stringify({ level: "error", msg: "start-up failed", error: String(error?.message ?? error) }) + "\n");
  process.exit(1);
});
