/**
 * The HTTP transport's floor for an MCP server: a bare Bun.serve that speaks just enough
 * Streamable HTTP for the SDK client (initialize, notifications) and answers every tools/call
 * with the recorded result given as the argument, doing no work (GET and DELETE: 405, as this
 * service answers them). Prints its port.
 */
export {}; // a module of its own (its names do not meet other scripts')

const result = process.argv[2] ?? '{"content":[]}';
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    // The client's GET (an event stream) and DELETE (end of session) get what a stateless server answers.
    if (request.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
    const message = (await request.json()) as { id?: string | number; method?: string };
    if (message.id === undefined) return new Response(null, { status: 202 });
    const answer =
      message.method === "initialize"
        ? JSON.stringify({ protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "replayer", version: "1" } })
        : result;
    return new Response(`{"result":${answer},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`, { headers: { "content-type": "application/json" } });
  },
});
console.log(JSON.stringify({ msg: "listening", base_url: `http://127.0.0.1:${server.port}` }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
