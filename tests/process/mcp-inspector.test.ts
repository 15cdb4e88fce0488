/**
 * The official MCP Inspector CLI, run for real against a spawned server:
 * - in a terminal, a refused key leads it into this server's OAuth flow: it registers and shows
 *   the authorization URL where the owner approves;
 * - in scripts (`--stored-auth-only`, the Inspector's own advice for non-interactive runs) it
 *   prints the 401's reason;
 * - without a terminal and without that flag it stops at once with its `auth_required` code.
 * A good key lists the key's tools, and `--strict` finds nothing to warn about in their schemas.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

const ROOT = join(import.meta.dir, "../..");
const INSPECTOR = join(ROOT, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");
/** The Inspector's exit code for "authentication required" (its EXIT_CODES.AUTH_REQUIRED). */
const AUTH_REQUIRED_EXIT = 3;
const home = mkdtempSync(join(tmpdir(), "vet-inspector-"));
let server: ServerProcess;
let token: string;

beforeAll(async () => {
  server = await startServer({ DATA_DIR: join(home, "data") });
  const owner = await call(server.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "inspector@clinic.test", password: "a long password", name: "I", clinic_name: "Inspected" } });
  token = owner.body.access_token;
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
}, SERVER_STOP_TIMEOUT_MS);

/**
 * Runs `inspector --cli` against the server's /mcp; `terminal` gives it a pseudo-terminal (util-linux
 * `script`). `until`: the output that ends the run (a terminal run waits for the owner's consent
 * once it has shown the authorization URL, so it is stopped as soon as that is printed).
 */
async function inspector(key: string | null, extra: string[], terminal = false, until?: (output: string) => boolean) {
  const header = key === null ? [] : ["--header", `Authorization: Bearer ${key}`];
  const args = [INSPECTOR, "--cli", `${server.baseUrl}/mcp`, "--transport", "http", "--method", "tools/list", ...header, ...extra];
  const quoted = ["node", ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
  const command = terminal ? ["script", "-qec", quoted, "/dev/null"] : ["node", ...args];
  const started = performance.now();
  const child = Bun.spawn(command, {
    // A memory secret store: no keychain is asked for (and none is warned about).
    env: { PATH: process.env.PATH ?? "", HOME: home, MCP_INSPECTOR_SECRET_STORE: "memory", BROWSER: "none" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const killer = setTimeout(() => child.kill(), 20_000);
  let seen = "";
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of stream) {
      const part = decoder.decode(chunk, { stream: true });
      text += part;
      seen += part;
      if (until?.(seen)) child.kill();
    }
    return text;
  };
  const [code, stdout, stderr] = await Promise.all([child.exited, read(child.stdout), read(child.stderr)]);
  clearTimeout(killer);
  return { code, stdout, stderr, output: `${stdout}\n${stderr}`, ms: performance.now() - started };
}

async function newKey(body: Record<string, unknown> = {}) {
  const r = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", { token, json: { name: "inspector", scopes: ["read", "clinic_context"], ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; api_key: string };
}

async function revokedKey() {
  const key = await newKey();
  expect((await call(server.baseUrl, "DELETE", `/api/v1/mcp/keys/${key.id}`, { token })).status).toBe(204);
  return key.api_key;
}

const UNKNOWN_KEY = "svc_0123456789abcdef0123456789abcdef";

test.each([
  ["no key", async () => null, "needs the clinic's MCP API key"],
  ["an unknown key", async () => UNKNOWN_KEY, "The API key is not valid"],
  ["a revoked key", revokedKey, "revoked"],
])("%s, in a script (--stored-auth-only): the Inspector exits within 5 s with the server's reason", async (_label, keyFor, reason) => {
  const result = await inspector(await keyFor(), ["--stored-auth-only"]);
  expect(result.code, result.output).toBe(AUTH_REQUIRED_EXIT);
  expect(result.ms, result.output).toBeLessThan(5_000);
  expect(result.stderr).toContain(reason);
}, 30_000);

test("a refused key in a terminal: the Inspector starts this server's OAuth flow (registration, then the authorization URL for the owner's consent)", async () => {
  const expected = [`${server.baseUrl}/authorize?response_type=code&client_id=mcp_client_`, "code_challenge_method=S256", `resource=${encodeURIComponent(`${server.baseUrl}/mcp`)}`];
  const result = await inspector(UNKNOWN_KEY, [], true, (output) => expected.every((part) => output.includes(part)));
  // `script` joins the child's stdout and stderr on the terminal it gives it.
  for (const part of expected) expect(result.output).toContain(part);
}, 30_000);

test("a bad key without a terminal or flag: the Inspector stops at once with auth_required, never a hang", async () => {
  const result = await inspector(UNKNOWN_KEY, []);
  expect(result.code, result.output).toBe(AUTH_REQUIRED_EXIT);
  expect(result.ms, result.output).toBeLessThan(5_000);
  expect(result.stderr).toContain('"code":"auth_required"');
}, 30_000);

test.each([
  [["clinic_context"], ["get_clinic_context"]],
  [["read", "query", "clinic_context"], ["describe_schema", "find_available_slots", "get_clinic_context", "query_database"]],
])("a key with scopes %j: tools/list --strict lists %j and warns about nothing", async (scopes, tools) => {
  const key = await newKey({ scopes });
  const result = await inspector(key.api_key, ["--strict"]);
  expect(result.code, result.output).toBe(0);
  const listed = (JSON.parse(result.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name).sort();
  expect(listed).toEqual(tools);
  // --strict prints "N errors, M warnings across K tools" only when it found something.
  expect(result.stderr, result.stderr).not.toMatch(/warning|unknown format|errors?,/i);
}, 30_000);
