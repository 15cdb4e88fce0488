/**
 * The secrets key is verified, not guessed: a server whose SECRETS_KEY does not open the secrets
 * its database holds refuses to start with one line that says so; `secrets rekey --from OLD`
 * re-seals them (and `admin grant|revoke` from the same command line); two instances of one PostgreSQL database with different keys: the second refuses.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { webhookEndpoints } from "../../src/db/schema";
import { createSecretBox } from "../../src/lib/secrets";
import { verifySecretsKey } from "../../src/cli/secrets";
import { ManualClock } from "../../src/lib/clock";
import { POSTGRES_URL } from "../helpers/database";
import { call, cliEnv, startServer, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";
import { useServerStore } from "../helpers/server-store";

const ROOT = join(import.meta.dir, "../..");
const KEY_A = "secrets-key-A-that-is-at-least-32-bytes-long";
const KEY_B = "secrets-key-B-that-is-at-least-32-bytes-long";
const store = useServerStore("secrets-key");

/** Runs the CLI to completion with the store's environment; its exit code and output. */
async function runCli(args: string[], settings: Record<string, string>) {
  const env = cliEnv({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", REGISTRATION: "open", ...store.env(settings) });
  const child = Bun.spawn(["bun", "src/index.ts", ...args], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

const secretsOpenWith = (key: string) =>
  store.read(async (database) => {
    const rows = await database.db.select({ sealed: webhookEndpoints.secret_encrypted }).from(webhookEndpoints);
    const box = createSecretBox(key);
    return rows.length > 0 && rows.every((row) => (box.open(row.sealed), true));
  });

describe("SECRETS_KEY against the database's key check", () => {
  test("sealed under one key, a start with another exits non-zero naming the key's source; rekey makes it start", async () => {
    const first = await startServer(store.env({ SECRETS_KEY: KEY_A, WEBHOOK_ALLOWED_NETWORKS: "127.0.0.0/8", WEBHOOK_DISPATCHER: "off" }));
    try {
      const owner = await call(first.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "keys@clinic.test", password: "a long password", name: "K", clinic_name: "Keys" } });
      expect(owner.status, owner.text).toBe(201);
      const hook = await call(first.baseUrl, "POST", "/api/v1/webhooks", { token: owner.body.access_token, json: { url: "http://127.0.0.1:9/hook", events: ["tutor.created"] } });
      expect(hook.status, hook.text).toBe(201);
    } finally {
      expect(await first.stop()).toBe(0);
    }

    const refused = await runCli(["serve"], { SECRETS_KEY: KEY_B });
    expect(refused.code).not.toBe(0);
    const line = JSON.parse(refused.stderr.trim().split("\n").at(-1)!) as { msg: string; error: string };
    expect(line.msg).toBe("cannot start");
    expect(line.error).toContain("the secrets key from SECRETS_KEY (the environment) does not open the secrets stored in");
    expect(line.error).toContain("secrets rekey --from OLD_KEY");
    expect(line.error).not.toContain(KEY_B);

    const wrongOld = await runCli(["secrets", "rekey", "--from", "not-the-old-key-not-the-old-key-not-the-old"], { SECRETS_KEY: KEY_B });
    expect(wrongOld.code, wrongOld.stderr).not.toBe(0);
    expect(wrongOld.stderr).toContain("nothing was changed");
    expect(await secretsOpenWith(KEY_A)).toBe(true);

    const rekeyed = await runCli(["secrets", "rekey", "--from", KEY_A], { SECRETS_KEY: KEY_B });
    expect(rekeyed.code, rekeyed.stderr).toBe(0);
    expect(JSON.parse(rekeyed.stdout)).toMatchObject({ resealed: 1 });
    expect(await secretsOpenWith(KEY_B)).toBe(true);

    const started = await startServer(store.env({ SECRETS_KEY: KEY_B }));
    expect(await started.stop()).toBe(0);
    const oldKey = await runCli(["serve"], { SECRETS_KEY: KEY_A });
    expect(oldKey.code).not.toBe(0);
    expect(oldKey.stderr).toContain("does not open the secrets stored in");

    // The first account is the install's administrator; `admin revoke` keeps the last one.
    const granted = await runCli(["admin", "grant", "KEYS@clinic.test"], { SECRETS_KEY: KEY_B });
    expect(granted.code, granted.stderr).toBe(0);
    expect(JSON.parse(granted.stdout)).toMatchObject({ email: "keys@clinic.test", is_admin: true });
    const revoked = await runCli(["admin", "revoke", "keys@clinic.test"], { SECRETS_KEY: KEY_B });
    expect(revoked.code).not.toBe(0);
    expect(revoked.stderr).toContain("only administrator");
  }, 300_000);

  test.skipIf(!!POSTGRES_URL)("a DATA_DIR/secrets-key file that is not the database's key is named as the source", async () => {
    writeFileSync(join(store.env().DATA_DIR, "secrets-key"), "a-key-file-that-is-not-the-databases-key-at-all\n");
    const refused = await runCli(["serve"], {});
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`the secrets key from DATA_DIR/secrets-key (${join(store.env().DATA_DIR, "secrets-key")}) does not open`);
  }, 60_000);

  test.skipIf(!!POSTGRES_URL)("backup says which key its secrets need; a restore under another key says they do not open with it", async () => {
    // The database's key check, as a first start under KEY_B records it (the test above did so too).
    await store.read(async (database) => {
      await database.migrate();
      await verifySecretsKey(database, { secretsKey: KEY_B }, new ManualClock());
    });
    const taken = await runCli(["backup"], { SECRETS_KEY: KEY_B });
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stdout).toContain("sealed with the secrets key from SECRETS_KEY (the environment): a restore needs that same key");
    const file = /backup written: (\S+) .* in (\S+)$/m.exec(taken.stdout)!;
    const elsewhere = mkdtempSync(join(tmpdir(), "vet-restore-key-"));
    try {
      const env = cliEnv({ LOG_LEVEL: "silent", DATA_DIR: elsewhere });
      const restore = async (key: string) => {
        const child = Bun.spawn(["bun", "src/index.ts", "restore", join(file[2]!, file[1]!), "--force"], { cwd: ROOT, env: { ...env, SECRETS_KEY: key }, stdout: "pipe", stderr: "pipe" });
        const [code, stdout] = await Promise.all([child.exited, new Response(child.stdout).text()]);
        return { code, stdout };
      };
      const wrong = await restore(KEY_A);
      expect(wrong.code).toBe(0);
      expect(wrong.stdout).toContain("are not sealed with this configuration's key (from SECRETS_KEY (the environment))");
      const right = await restore(KEY_B);
      expect(right.stdout).toContain("open with this configuration's secrets key");
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 120_000);

  test.skipIf(!POSTGRES_URL)("two instances of one PostgreSQL database with different keys: the second refuses to start", async () => {
    const first = await startServer(store.env({ SECRETS_KEY: KEY_B }));
    try {
      const second = await runCli(["serve"], { SECRETS_KEY: KEY_A });
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain("does not open the secrets stored in");
      const ready = await fetch(`${first.baseUrl}/ready`);
      expect(ready.status).toBe(200);
    } finally {
      await first.stop();
    }
  }, SERVER_STOP_TIMEOUT_MS * 2);
});
