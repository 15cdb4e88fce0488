import { runCli } from "./cli";

runCli(process.argv.slice(2)).catch((error) => {
  process.stderr.write(JSON.stringify({ level: "error", msg: "failed", error: String(error?.message ?? error) }) + "\n");
  process.exit(1);
});
