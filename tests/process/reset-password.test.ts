/** The reset-password command, as an operator runs it (password from the environment or stdin, never an argument). */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDataDir } from "../helpers/database";
import { call, cliEnv, startServer } from "../helpers/server-process";

const ROOT = join(import.meta.dir, "../..");
const dataDir = mkdtempSync(join(tmpdir(), "vet-reset-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function cli(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const child = Bun.spawn(["bun", "src/index.ts", ...args], {
    cwd: ROOT,
    env: cliEnv({ DATA_DIR: dataDir, LOG_LEVEL: "silent", ...env }),
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, out, err };
}

test("reset a forgotten owner password from NEW_PASSWORD or stdin; an argument is refused", async () => {
  await seedDataDir(dataDir); // the commands' subject is the account, not a brand-new directory
  const created = await cli(["create-owner", "--email", "Owner@Clinic.test", "--name", "O", "--clinic", "C"], { OWNER_PASSWORD: "the first password" });
  expect(created.code, created.err).toBe(0);
  const refused = await cli(["reset-password", "--email", "owner@clinic.test", "--password", "on the command line"]);
  expect(refused.code).not.toBe(0);
  expect(refused.err).toContain("never from the command line");
  const fromEnv = await cli(["reset-password", "--email", "owner@clinic.test"], { NEW_PASSWORD: "second password!" });
  expect(fromEnv.code, fromEnv.err).toBe(0);
  const fromStdin = await cli(["reset-password", "--email", "owner@clinic.test"], {}, "third password!\n");
  expect(fromStdin.code, fromStdin.err).toBe(0);
  const server = await startServer({ DATA_DIR: dataDir });
  try {
    const old = await call(server.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "owner@clinic.test", password: "second password!" } });
    expect(old.status).toBe(401);
    const login = await call(server.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "owner@clinic.test", password: "third password!" } });
    expect(login.status, login.text).toBe(200);
  } finally {
    await server.stop();
  }
}, 60_000);
