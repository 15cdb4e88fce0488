import { asksOnlyForInfo } from "./cli/info-options";
import { compilePostgres } from "./db/pglite-assets";

const argv = process.argv.slice(2);
const command = argv.find((arg) => !arg.startsWith("-")) ?? "serve";
// The embedded database's compile (a third of a cold start) is started before the rest of the
// code loads, so the two overlap: the commands are imported only after it has begun.
const opensEmbeddedDatabase = !process.env.DATABASE_URL?.trim() && !asksOnlyForInfo(argv);
const compiledPostgres = opensEmbeddedDatabase ? compilePostgres() : undefined;
import("./cli")
  .then(({ runCli }) => runCli(argv, { compiledPostgres }))
  .catch(async (error) => {
    const { describeStartupError } = await import("./cli/startup-errors");
    const msg = command === "serve" || command === "demo" ? "cannot start" : `${command} failed`;
    process.stderr.write(JSON.stringify({ level: "error", msg, error: describeStartupError(error) }) + "\n");
    process.exit(1);
  });
