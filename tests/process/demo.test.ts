/** `bun run demo` as a person runs it: the logins appear once the server listens, above the request log; a second run reuses the clinic. */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { demoLogins } from "../helpers/demo-block";
import { call, startServer } from "../helpers/server-process";

const dataDir = mkdtempSync(join(tmpdir(), "vet-demo-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function runDemo() {
  const server = await startServer({ DATA_DIR: dataDir }, { command: ["bun", "src/index.ts", "demo"] });
  // The block is printed right after "listening"; wait for its closing rule.
  for (let i = 0; i < 200 && server.lines.filter((line) => line.startsWith("====")).length < 2; i++) await Bun.sleep(25);
  const start = server.lines.findIndex((line) => line.includes('"msg":"listening"'));
  const block = server.lines.slice(start + 1).join("\n");
  const owner = demoLogins(block).find((login) => login.role === "owner");
  return { server, block, email: owner?.email, password: owner?.password };
}

test("the demo prints every login after listening; a second run says reused and the new owner password works", async () => {
  const first = await runDemo();
  try {
    expect(first.block).toContain("Demo clinic: Clínica Veterinaria Los Aromos (created)");
    expect(first.block).toContain(first.server.baseUrl);
    expect(demoLogins(first.block).map((login) => login.role)).toEqual(["owner", "vet", "vet", "staff"]);
    expect(first.block).toMatch(/MCP key\s+svc_[A-Za-z0-9]{32}/);
    const login = await call(first.server.baseUrl, "POST", "/api/v1/auth/login", { json: { email: first.email, password: first.password } });
    expect(login.status, login.text).toBe(200);
  } finally {
    await first.server.stop();
  }
  const second = await runDemo();
  try {
    expect(second.block).toContain("(reused)");
    expect(second.password).not.toBe(first.password);
    const login = await call(second.server.baseUrl, "POST", "/api/v1/auth/login", { json: { email: second.email, password: second.password } });
    expect(login.status, login.text).toBe(200);
  } finally {
    await second.server.stop();
  }
}, 90_000);
