import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, POSTGRES_URL, seedDataDir, type TestDatabase } from "../helpers/database";
import { call, cliEnv, startServer } from "../helpers/server-process";

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
  const env: Record<string, string> = pg?.serverEnv ?? {};
  const first = await startServer(env, { command: [binary], cwd: workDir });
  const owner = await call(first.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "bin@clinic.test", password: "a long password", name: "B", clinic_name: "Binary" } });
  expect(owner.status, owner.text).toBe(201);
  const key = await call(first.baseUrl, "POST", "/api/v1/mcp/keys", { token: owner.body.access_token, json: { name: "k", scopes: ["clinic_context"] } });
  expect(key.status, key.text).toBe(201);
  const figures = await call(first.baseUrl, "POST", "/mcp/tools/get_clinic_context/invoke", { token: key.body.api_key, json: {} });
  expect(figures.status, figures.text).toBe(200);
  expect((await fetch(`${first.baseUrl}/docs`)).status).toBe(200);
  // The console is inside the binary: its page and its bundled, minified script.
  const page = await fetch(`${first.baseUrl}/`);
  const html = await page.text();
  expect(page.headers.get("content-type"), html).toContain("text/html");
  const script = /<script type="module"[^>]* src="(\/[^"]+\.js)"/.exec(html)?.[1];
  expect(script, html).toBeDefined();
  const bundle = await fetch(`${first.baseUrl}${script}`);
  expect(bundle.status).toBe(200);
  expect((await bundle.text()).length).toBeGreaterThan(10_000);
  expect(await first.stop()).toBe(0);
  if (!pg) expect(statSync(join(workDir, "data", "pg")).isDirectory()).toBe(true);

  const second = await startServer(env, { command: [binary], cwd: workDir });
  const login = await call(second.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "bin@clinic.test", password: "a long password" } });
  expect(login.status, login.text).toBe(200);
  const again = await call(second.baseUrl, "POST", "/mcp/tools/get_clinic_context/invoke", { token: key.body.api_key, json: {} });
  expect(again.headers.get("x-ratelimit-remaining")).toBe("998");
  expect(await second.stop()).toBe(0);
}, 120_000);

/** Runs the binary from the work directory, without DATABASE_URL unless given. */
function run(args: string[], env: Record<string, string>) {
  const childEnv = cliEnv({ HOME: workDir, ...env });
  const result = Bun.spawnSync([binary, ...args], { cwd: workDir, env: childEnv });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString(), output: `${result.stdout}\n${result.stderr}` };
}

/** An empty PostgreSQL database for the move (the suite's own under DATABASE_URL, else one on the local server). */
async function emptyPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: postgres } = await import("postgres");
  const base = POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const name = `vet_bin_move_${Bun.randomUUIDv7().replaceAll("-", "").slice(-12)}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const cleanup = postgres(base, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

test("the binary backs up, restores and moves to PostgreSQL and back, from another directory", async () => {
  const dirs = { source: join(workDir, "clinic-a"), restored: join(workDir, "clinic-b"), back: join(workDir, "clinic-c") };
  // The restore and the move back start from empty directories; the first clinic need not.
  await seedDataDir(dirs.source);
  const owner = run(["create-owner", "--email", "move@clinic.test", "--name", "M", "--clinic", "Moving", "--password", "a long password"], { DATA_DIR: dirs.source });
  expect(owner.code, owner.output).toBe(0);
  const backup = run(["backup"], { DATA_DIR: dirs.source });
  expect(backup.code, backup.output).toBe(0);
  const file = join(dirs.source, "backups", /backup written: (\S+)/.exec(backup.stdout)![1]!);

  const restored = run(["restore", file], { DATA_DIR: dirs.restored });
  expect(restored.code, restored.output).toBe(0);
  expect(restored.stderr).toContain("checksums verified");
  const again = run(["restore", file], { DATA_DIR: dirs.restored });
  expect(again.code, again.output).not.toBe(0);
  expect(again.output).toContain("already holds a database");

  // While a server owns the directory, nothing replaces it.
  const server = await startServer({ DATA_DIR: dirs.restored }, { command: [binary], cwd: workDir });
  const refused = run(["restore", file, "--force"], { DATA_DIR: dirs.restored });
  expect(refused.code, refused.output).not.toBe(0);
  expect(refused.output).toContain(dirs.restored);
  const login = await call(server.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "move@clinic.test", password: "a long password" } });
  expect(login.status, login.text).toBe(200);
  const taken = await call(server.baseUrl, "POST", "/api/v1/admin/backups", { token: login.body.access_token });
  expect(taken.status, taken.text).toBe(201);
  expect(await server.stop()).toBe(0);
  const forced = run(["restore", file, "--force"], { DATA_DIR: dirs.restored });
  expect(forced.code, forced.output).toBe(0);
  expect(forced.stdout).toContain("the previous database was moved to");

  const target = await emptyPostgres();
  try {
    const moved = run(["move", "--to", target.url], { DATA_DIR: dirs.restored });
    expect(moved.code, moved.output).toBe(0);
    expect(moved.stdout).toContain("every table verified");
    const onPostgres = await startServer({ DATABASE_URL: target.url }, { command: [binary], cwd: workDir });
    const there = await call(onPostgres.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "move@clinic.test", password: "a long password" } });
    expect(there.status, there.text).toBe(200);
    expect(await onPostgres.stop()).toBe(0);
    const full = run(["move", "--to", target.url], { DATA_DIR: dirs.restored });
    expect(full.code, full.output).not.toBe(0);
    expect(full.output).toContain("not empty");
    const home = run(["move", "--from", target.url], { DATA_DIR: dirs.back });
    expect(home.code, home.output).toBe(0);
  } finally {
    await target.drop();
  }
}, 180_000);
