import { runCli } from "./cli";
import { describeStartupError } from "./cli/startup-errors";

const argv = process.argv.slice(2);
const command = argv.find((arg) => !arg.startsWith("-")) ?? "serve";
runCli(argv).catch((error) => {
  const msg = command === "serve" || command === "demo" ? "cannot start" : `${command} failed`;
  process.stderr.write(JSON.stringify({ level: "error", msg, error: describeStartupError(error) }) + "\n");
  process.exit(1);
});
