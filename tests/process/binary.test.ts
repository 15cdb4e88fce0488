import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { call, startServer } from "../helpers/server-process";

/** Builds the single binary and uses it from an unrelated directory, as a clinic would. */
const workDir = mkdtempSync(join(tmpdir(), "vet-clinic-binary-"));
const binary = join(workDir, "bin", "vet-clinic");
let pg: TestDatabase | undefined;

beforeAll(async () => {
  const build = Bun.spawn(["bun", "build", "--compile", "--minify", "src/index.ts", "--outfile", binary], { cwd: join(import.meta.dir, "../.."), stdout: "pipe", stderr: "pipe" });
  if ((await build.exited) !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`);
  if (POSTGRES_URL) pg = await createTestDatabase();
}, 120_000);
afterAll(async () => {
  await pg?.destroy();
  rmSync(workDir, { recursive: true, force: true });
});

test("--version and --help answer without starting anything", async () => {
  const version = Bun.spawnSync([binary, "--version"], { cwd: workDir });
  expect(version.stdout.toString().trim()).toMatch(/^\d+\.\d+\.\d+$/);
  const help = Bun.spawnSync([binary, "--help"], { cwd: workDir });
  expect(help.stdout.toString()).toContain("seed --demo");
});

test("the binary serves from another directory, and its data survives a restart", async () => {
  const env: Record<string, string> = pg?.url ? { DATABASE_URL: pg.url } : {};
  const first = await startServer(env, { command: [binary], cwd: workDir });
  const owner = await call(first.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "bin@clinic.test", password: "a long password", name: "B", clinic_name: "Binary" } });
  expect(owner.status, owner.text).toBe(201);
  const key = await call(first.baseUrl, "POST", "/api/v1/mcp/keys", { token: owner.body.access_token, json: { name: "k", scopes: ["clinic_context"] } });
  expect(key.status, key.text).toBe(201);
  const figures = await call(first.baseUrl, "POST", "/mcp/tools/get_clinic_context/invoke", { token: key.body.api_key, json: {} });
  expect(figures.status, figures.text).toBe(200);
  expect((await fetch(`${first.baseUrl}/docs`)).status).toBe(200);
  expect(await first.stop()).toBe(0);
  if (!pg) expect(statSync(join(workDir, "data", "pg")).isDirectory()).toBe(true);

  const second = await startServer(env, { command: [binary], cwd: workDir });
  const login = await call(second.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "bin@clinic.test", password: "a long password" } });
  expect(login.status, login.text).toBe(200);
  const again = await call(second.baseUrl, "POST", "/mcp/tools/get_clinic_context/invoke", { token: key.body.api_key, json: {} });
  expect(again.headers.get("x-ratelimit-remaining")).toBe("998");
  expect(await second.stop()).toBe(0);
}, 120_000);
