/** One owner per data directory, one process per port, and start-up errors a person can act on. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { describeStartupError, MigrationFailedError } from "../../src/cli/startup-errors";
import { openDatabase } from "../../src/db/client";
import { DataDirLockedError, lockDataDir } from "../../src/db/data-dir-lock";
import { createTestDatabase, POSTGRES_URL, seedDataDir } from "../helpers/database";
import { cliEnv, startServer } from "../helpers/server-process";

const ROOT = join(import.meta.dir, "../..");
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "vet-startup-"));
  dirs.push(dir);
  return dir;
};
// Several embedded data directories: removing them takes seconds on a busy machine, longer than
// the default hook timeout when this file is not the first of a run.
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Runs the CLI to completion; resolves to its exit code and what it printed on stderr. */
async function runCli(env: Record<string, string>, args: string[] = ["serve"]) {
  const childEnv = cliEnv({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env });
  const child = Bun.spawn(["bun", "src/index.ts", ...args], { cwd: ROOT, env: childEnv, stdout: "pipe", stderr: "pipe" });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  return { code, stderr: stderr.trim() };
}

describe("the data directory lock", () => {
  test("a second open of the same directory is refused naming it and the owner's PID; closing releases it", async () => {
    const dir = await seedDataDir(tempDir());
    const first = await openDatabase({ dataDir: dir });
    try {
      const second = openDatabase({ dataDir: dir });
      await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
      await expect(second).rejects.toThrow(`${dir} is in use by another process (PID ${process.pid} on host ${hostname()})`);
    } finally {
      await first.close();
    }
    const again = await openDatabase({ dataDir: dir });
    await again.close();
  }, 30_000);

  test("a lock left by a process that is gone is taken over", async () => {
    const dir = tempDir();
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    writeFileSync(join(dir, ".lock"), `${gone.pid} ${hostname()}\n`);
    const lock = lockDataDir(dir);
    lock.release();
  });

  test("a second server on the same DATA_DIR exits with one line naming the directory and the PID", async () => {
    const dir = tempDir();
    const server = await startServer({ DATA_DIR: dir });
    try {
      const second = await runCli({ DATA_DIR: dir });
      expect(second.code).not.toBe(0);
      const line = JSON.parse(second.stderr.split("\n").at(-1)!);
      expect(line.error).toContain(`the data directory ${dir} is in use by another process (PID ${server.pid} on host ${hostname()})`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);

  test("a server killed with SIGKILL leaves a stale lock that the next start takes over", async () => {
    const dir = tempDir();
    const server = await startServer({ DATA_DIR: dir });
    process.kill(server.pid, "SIGKILL");
    await server.stop().catch(() => {});
    const next = await startServer({ DATA_DIR: dir });
    expect(await next.stop()).toBe(0);
  }, 60_000);
});

describe("one process per port", () => {
  test("serve refuses a port another process listens on, with a clear line", async () => {
    const server = await startServer({ DATA_DIR: tempDir() });
    try {
      const port = new URL(server.baseUrl).port;
      const second = await runCli({ DATA_DIR: await seedDataDir(tempDir()), PORT: port });
      expect(second.code).not.toBe(0);
      expect(second.stderr).toContain(`port ${port} on 127.0.0.1 is already in use by another process`);
    } finally {
      await server.stop();
    }
  }, 60_000);
});

describe("start-up errors are one actionable line", () => {
  test("DATA_DIR that is a file", async () => {
    const file = join(tempDir(), "not-a-dir");
    writeFileSync(file, "x");
    const r = await runCli({ DATA_DIR: file });
    expect(r.code).not.toBe(0);
    expect(r.stderr.split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stderr).error).toContain(`the data directory ${file} is not a directory`);
  });

  test("a corrupt embedded data directory", async () => {
    const dir = await seedDataDir(tempDir());
    writeFileSync(join(dir, "pg", "global", "pg_control"), "garbage");
    const r = await runCli({ DATA_DIR: dir });
    expect(r.code).not.toBe(0);
    const line = JSON.parse(r.stderr.split("\n").at(-1)!);
    expect(line.error).toContain(`the embedded database in ${dir}/pg could not be opened`);
    expect(line.error).not.toContain("[object Object]");
  }, 60_000);

  test("PostgreSQL that cannot be reached", async () => {
    const r = await runCli({ DATABASE_URL: "postgres://nobody:secret@127.0.0.1:1/nothing" });
    expect(r.code).not.toBe(0);
    const line = JSON.parse(r.stderr.split("\n").at(-1)!);
    expect(line.error).toContain("PostgreSQL at postgres://nobody:***@127.0.0.1:1/nothing cannot be reached");
    expect(r.stderr).not.toContain("secret");
  });

  test("the rest, injected: disk full, read-only, not writable, PGlite's own errno objects, a failed migration", () => {
    const env = { DATA_DIR: "/srv/clinic" };
    const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
    expect(describeStartupError(errno("ENOSPC"), env)).toBe("the disk holding the data directory /srv/clinic is full; free space and start again");
    expect(describeStartupError(errno("EROFS"), env)).toContain("/srv/clinic is on a read-only filesystem");
    expect(describeStartupError(errno("EACCES"), env)).toContain("/srv/clinic is not writable by this user (EACCES)");
    // Emscripten's file-system errors are plain objects with a WASI errno and no message.
    expect(describeStartupError({ name: "ErrnoError", errno: 51 }, env)).toContain("is full");
    expect(describeStartupError({ name: "ErrnoError", errno: 69 }, env)).toContain("read-only filesystem");
    expect(describeStartupError({ name: "ErrnoError", errno: 99 }, env)).not.toContain("[object Object]");
    const migration = new MigrationFailedError("PostgreSQL at postgres://x@db/clinic", new Error('relation "x" already exists'));
    expect(describeStartupError(migration, env)).toBe('migrations failed on PostgreSQL at postgres://x@db/clinic: relation "x" already exists');
  });
});

describe.skipIf(!POSTGRES_URL)("retries after a crash are never blocked", () => {
  test("a payment in flight when its server is killed: the retry with the same Idempotency-Key runs fresh, once", async () => {
    const database = await createTestDatabase();
    const env = { ...database.serverEnv! };
    let server = await startServer(env);
    const api = async (method: string, path: string, token: string | undefined, json?: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
        method,
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
      const text = await response.text();
      return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
    };
    const owner = await api("POST", "/auth/register", undefined, { email: "crash@clinic.test", password: "a long password", name: "C", clinic_name: "Crash" });
    const token = owner.body.access_token;
    const tutor = await api("POST", "/tutors", token, { name: "T" });
    const invoice = await api("POST", "/billing/invoices", token, { tutor_id: tutor.body.id, items: [{ description: "x", quantity: 1, unit_price: 1000 }] });
    expect((await api("POST", `/billing/invoices/${invoice.body.id}/emit`, token)).status).toBe(200);

    // Hold the invoice's row lock so the payment stops inside its transaction, then kill the server.
    // Held on the direct connection when there is one: through a pooler it would take one of the
    // few server connections the payment itself needs.
    const holder = postgres(database.directUrl ?? database.url!, { max: 1, onnotice: () => {} });
    const key = crypto.randomUUID();
    let paymentWasWaiting = false;
    const locked = holder.begin(async (tx) => {
      await tx`select id from invoices where id = ${invoice.body.id} for update`;
      const inFlight = api("POST", "/billing/payments", token, { invoice_id: invoice.body.id, amount: 1190, method: "card" }, { "idempotency-key": key }).catch(() => undefined);
      // Until the payment waits on the lock (seconds on a loaded box with files running in parallel).
      for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
        const [waiting] = await tx`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
        if (waiting!.n > 0) {
          paymentWasWaiting = true;
          break;
        }
        await Bun.sleep(10);
      }
      process.kill(server.pid, "SIGKILL");
      await inFlight;
    });
    await locked;
    await holder.end();
    expect(paymentWasWaiting).toBe(true);
    await server.stop().catch(() => {});

    server = await startServer(env);
    try {
      const retry = await api("POST", "/billing/payments", token, { invoice_id: invoice.body.id, amount: 1190, method: "card" }, { "idempotency-key": key });
      expect(retry.status, retry.text).toBe(201);
      const replay = await api("POST", "/billing/payments", token, { invoice_id: invoice.body.id, amount: 1190, method: "card" }, { "idempotency-key": key });
      expect(replay.status, replay.text).toBe(200);
      const payments = await api("GET", `/billing/payments?invoice_id=${invoice.body.id}`, token);
      expect(payments.body.data).toHaveLength(1);
    } finally {
      await server.stop();
      await database.destroy();
    }
  }, 60_000);
});
