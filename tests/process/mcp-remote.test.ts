/**
 * mcp-remote run for real against a spawned server: without a key it completes the OAuth browser
 * flow (registration, the owner's approval, tokens) and lists the connection's tools; with a
 * pasted key (the README's Claude Desktop path) it lists the key's tools.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

const ROOT = join(import.meta.dir, "../..");
const home = mkdtempSync(join(tmpdir(), "vet-mcp-remote-"));
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  server = await startServer({ DATA_DIR: join(home, "data") });
  const owner = await call(server.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "remote@clinic.test", password: "a long password", name: "R", clinic_name: "Remote" } });
  token = owner.body.access_token;
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
}, SERVER_STOP_TIMEOUT_MS);

const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } } });

/**
 * Runs mcp-remote with `key`, feeding it `messages` on stdin. Returns when it exits, when its
 * stdout holds a response for every id of `untilIds` (they may arrive in any order), or after
 * `limitMs`.
 */
async function mcpRemote(key: string, messages: string[], limitMs: number, untilIds: number[] = []) {
  const started = performance.now();
  const child = Bun.spawn(["node", join(ROOT, "node_modules/mcp-remote/dist/proxy.js"), `${server.baseUrl}/mcp`, "--header", `Authorization: Bearer ${key}`, "--allow-http"], {
    env: { PATH: process.env.PATH ?? "", HOME: home },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  for (const message of messages) child.stdin.write(`${message}\n`);
  child.stdin.flush();
  const killer = setTimeout(() => child.kill(), limitMs);
  let stdout = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stdout) {
      stdout += decoder.decode(chunk, { stream: true });
      const lines = stdout.split("\n");
      if (untilIds.length && untilIds.every((id) => lines.some((line) => line.includes(`"id":${id}`)))) child.kill();
    }
  })();
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text(), reading]);
  clearTimeout(killer);
  return { code, stdout, stderr, ms: performance.now() - started };
}

async function newKey(body: Record<string, unknown> = {}) {
  const r = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", { token, json: { name: "remote", scopes: ["read", "clinic_context"], ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; api_key: string };
}

test("without a key: mcp-remote runs the OAuth browser flow, the owner approves on the consent page, and it lists the connection's tools", async () => {
  const child = Bun.spawn(["node", join(ROOT, "node_modules/mcp-remote/dist/proxy.js"), `${server.baseUrl}/mcp`, "--allow-http"], {
    env: { PATH: process.env.PATH ?? "", HOME: home, BROWSER: "/bin/true" },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const killer = setTimeout(() => child.kill(), 40_000);
  const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  child.stdin.write(`${INITIALIZE}\n${initialized}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
  child.stdin.flush();
  let stderr = "";
  let stdout = "";
  const decoder = new TextDecoder();
  // The browser's part: mcp-remote prints the authorization URL; the owner approves it in the console.
  // One reader for the whole run (leaving a for-await would cancel the stream and end mcp-remote).
  let announce: (url: string) => void = () => {};
  const announced = new Promise<string>((resolve) => (announce = resolve));
  void (async () => {
    for await (const chunk of child.stderr) {
      stderr += decoder.decode(chunk, { stream: true });
      const found = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(stderr)?.[1];
      // Its callback listener is up once it says it waits.
      if (found && stderr.includes("Waiting for authorization")) announce(found);
    }
  })();
  const authorizationUrl = await announced;
  const consent = await fetch(authorizationUrl, { redirect: "manual" });
  expect(consent.status).toBe(302);
  const request = new URLSearchParams(new URL(consent.headers.get("location")!).hash.split("?")[1]).get("request")!;
  const decided = await call(server.baseUrl, "POST", "/api/v1/mcp/authorization-requests/decision", { token, json: { request, approve: true, scopes: ["read", "clinic_context"], rate_limit_per_day: 100 } });
  expect(decided.status, decided.text).toBe(200);
  // The callback listener is on 127.0.0.1; a browser would try that address for localhost too.
  expect((await fetch(decided.body.redirect_to.replace("//localhost:", "//127.0.0.1:"))).status).toBeLessThan(400);
  for await (const chunk of child.stdout) {
    stdout += decoder.decode(chunk, { stream: true });
    if (stdout.includes('"id":2')) break;
  }
  child.kill();
  clearTimeout(killer);
  const listed = stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line)).find((r) => r.id === 2);
  const tools = listed?.result?.tools?.map((tool: { name: string }) => tool.name);
  expect(tools, `${stdout}\n${stderr}`).toEqual(expect.arrayContaining(["describe_schema", "get_clinic_context"]));
  expect(tools).not.toContain("query_database");
}, 60_000);

test("a valid key: tools/list through mcp-remote shows the key's tools, saved reports included, and a report answers a typed call", async () => {
  const report = await call(server.baseUrl, "POST", "/api/v1/mcp/reports", {
    token,
    json: { name: "clinic_days", title: "Days from a date", sql: "SELECT :day + :days AS later", parameters: [{ name: "day", type: "date", required: true }, { name: "days", type: "integer", required: true, min: 0, max: 365 }] },
  });
  expect(report.status, report.text).toBe(201);
  const key = await newKey();
  const listTools = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  const callReport = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "report_clinic_days", arguments: { day: "2026-02-27", days: 2 } } });
  const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
  const result = await mcpRemote(key.api_key, [INITIALIZE, initialized, listTools, callReport], 25_000, [2, 3]);
  const responses = result.stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  const tools = responses.find((r) => r.id === 2)?.result?.tools?.map((tool: { name: string }) => tool.name);
  expect(tools, `${result.stdout}\n${result.stderr}`).toEqual(expect.arrayContaining(["describe_schema", "get_clinic_context", "report_clinic_days"]));
  expect(tools).not.toContain("query_database");
  const answer = responses.find((r) => r.id === 3)?.result;
  expect(answer?.structuredContent?.rows, `${result.stdout}\n${result.stderr}`).toEqual([{ later: "2026-03-01" }]);
}, 30_000);
