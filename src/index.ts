import { runCli } from "./cli";
import { describeStartupError } from "./cli/startup-errors";

runCli(process.argv.slice(2)).catch((error) => {
  process.stderr.write(JSON.stringify({ level: "error", msg: "cannot start", error: describeStartupError(error) }) + "\n");
  process.exit(1);
});
