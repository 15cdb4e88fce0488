/**
 * A bare Bun.serve that speaks just enough Streamable HTTP for the SDK client (initialize,
 * notifications; GET and DELETE answered 405, as this service answers them) and hands every
 * other request's arguments to `answer`, whose JSON becomes the result. Prints its address, as
 * the scripts `startScript` runs do; on SIGTERM, `onStop` runs before it exits. The benchmarks'
 * floors: no framework, key, quota or log.
 */
export function serveBareMcp(answer: (params: { name?: string; arguments?: Record<string, unknown> }) => Promise<string> | string, onStop: () => Promise<void> = async () => {}): void {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      if (request.method !== "POST") return new Response(null, { status: 405, headers: { allow: "POST" } });
      const message = (await request.json()) as { id?: string | number; method?: string; params?: { name?: string; arguments?: Record<string, unknown> } };
      if (message.id === undefined) return new Response(null, { status: 202 });
      const result =
        message.method === "initialize"
          ? JSON.stringify({ protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "bare", version: "1" } })
          : await answer(message.params ?? {});
      return new Response(`{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`, { headers: { "content-type": "application/json" } });
    },
  });
  console.log(JSON.stringify({ msg: "listening", base_url: `http://127.0.0.1:${server.port}` }));
  process.on("SIGTERM", async () => {
    server.stop(true);
    await onStop();
    process.exit(0);
  });
}
