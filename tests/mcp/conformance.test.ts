/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios)
 * against a spawned server, through a small proxy that adds an API key (the suite's client sends
 * none). The scenarios it does not pass are listed, each with its reason, in
 * conformance-expected-failures.yml; the suite fails on any other failure and on a listed
 * scenario that starts passing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

const ROOT = join(import.meta.dir, "../..");
const home = mkdtempSync(join(tmpdir(), "vet-conformance-"));
let server: ServerProcess;
let proxy: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  server = await startServer({ DATA_DIR: join(home, "data") });
  const owner = await call(server.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "conformance@clinic.test", password: "a long password", name: "C", clinic_name: "Conformance" } });
  const key = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", { token: owner.body.access_token, json: { name: "conformance", scopes: ["read", "query", "clinic_context"] } });
  const upstream = new URL(server.baseUrl);
  proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      url.host = upstream.host;
      // The suite's own Host header goes through, so its DNS-rebinding check reaches the server.
      const headers = new Headers(request.headers);
      headers.set("authorization", `Bearer ${key.body.api_key}`);
      return fetch(url, { method: request.method, headers, body: request.body, redirect: "manual" });
    },
  });
}, 60_000);
afterAll(async () => {
  proxy?.stop(true);
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
}, SERVER_STOP_TIMEOUT_MS);

test("server scenarios pass except the listed ones that need the suite's fixtures", async () => {
  const child = Bun.spawn(
    ["bun", join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js"), "server", "--url", `http://127.0.0.1:${proxy.port}/mcp`, "--expected-failures", join(import.meta.dir, "conformance-expected-failures.yml"), "-o", join(home, "results")],
    { cwd: home, stdout: "pipe", stderr: "pipe" },
  );
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  const summary = stdout.slice(stdout.indexOf("=== SUMMARY ==="));
  expect(code, `${summary}\n${stderr.slice(-2000)}`).toBe(0);
  for (const scenario of ["server-initialize", "ping", "tools-list", "resources-list", "prompts-list", "completion-complete", "dns-rebinding-protection"]) {
    expect(summary).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
  }
}, 180_000);
