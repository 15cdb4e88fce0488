/**
 * The framework's own share: an Elysia app with one POST route shaped like /invoke (a path
 * parameter, a JSON body) answering a fixed JSON body, and no plugins. Prints its port.
 */
import { Elysia, t } from "elysia";

const answer = JSON.parse(process.argv[2] ?? '{"ok":true}') as Record<string, unknown>;
const app = new Elysia()
  .post("/mcp/tools/:tool/invoke", () => answer, { params: t.Object({ tool: t.String() }), body: t.Unknown() })
  .listen({ port: 0, hostname: "127.0.0.1" });
console.log(JSON.stringify({ msg: "listening", base_url: `http://127.0.0.1:${app.server!.port}` }));
process.on("SIGTERM", () => {
  void app.stop(true);
  process.exit(0);
});
