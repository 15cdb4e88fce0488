/** The baseline: a bare Bun.serve answering a fixed JSON body, printing its port. */
const body = process.argv[2] ?? '{"ok":true}';
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response(body, { headers: { "content-type": "application/json; charset=utf-8" } }),
});
console.log(JSON.stringify({ msg: "listening", base_url: `http://127.0.0.1:${server.port}` }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
