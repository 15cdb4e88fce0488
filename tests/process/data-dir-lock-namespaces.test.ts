/**
 * The data-directory lock as containers use it: the server as PID 1 of its own PID namespace, a
 * new host name for every container, owners killed with SIGKILL (the OOM killer, a power cut) and
 * parents that have not reaped them yet. The kernel holds the lock, so whatever kills the owner
 * frees the directory, and two live owners still exclude each other whatever their PIDs and hosts.
 * Needs `unshare` and the right to create namespaces (root); skipped with a message otherwise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { seedDataDir } from "../helpers/database";
import { cliEnv, startServer, type ServerProcess } from "../helpers/server-process";

const ROOT = join(import.meta.dir, "../..");
const SOURCE = ["bun", "src/index.ts"];
const workDir = mkdtempSync(join(tmpdir(), "vet-lock-ns-"));
const BINARY = join(workDir, "vet-clinic");

const probe = Bun.spawnSync(["unshare", "--pid", "--fork", "--mount-proc", "--uts", "--kill-child", "true"], { stdout: "ignore", stderr: "pipe" });
const namespacesAvailable = probe.exitCode === 0;
if (!namespacesAvailable) {
  console.warn(`skipping the data-directory lock's namespace tests: \`unshare --pid --fork --mount-proc --uts\` is not available here (${probe.stderr?.toString().trim() || `exit ${probe.exitCode}`}); they need util-linux and root (or user namespaces)`);
}

let dirCount = 0;
const dataDir = () => join(workDir, `data-${++dirCount}`);

// The binary and several data directories: seconds to remove on a busy machine.
afterAll(() => rmSync(workDir, { recursive: true, force: true }), 60_000);

/** `command` as PID 1 of a new PID namespace (and, given `host`, under that host name), as a container runtime starts it. */
function asPid1(command: string[], host?: string): string[] {
  // --kill-child: when the test kills unshare, the kernel kills the whole namespace with it.
  const prefix = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"];
  return host ? [...prefix, "--uts", "sh", "-c", `hostname ${host} && exec "$@"`, "sh", ...command] : [...prefix, ...command];
}

/** The PID (in this namespace) of the only child of `parent`: the server under unshare or under a shell. */
function childOf(parent: number): number {
  const children = readFileSync(`/proc/${parent}/task/${parent}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
  expect(children).toHaveLength(1);
  return Number(children[0]);
}

/** The open flags of the descriptor through which `pid` holds `dir`'s lock (from /proc/PID/fdinfo). */
function lockDescriptorFlags(pid: number, dir: string): number {
  const fd = readdirSync(`/proc/${pid}/fd`).find((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === join(dir, ".lock"));
  expect(fd).toBeDefined();
  return parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))![1]!, 8);
}
const O_CLOEXEC = 0o2000000;

const processState = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];

/** Kills `pid` with SIGKILL and waits until it is dead (a zombie counts: it holds nothing any more). */
async function killHard(pid: number) {
  process.kill(pid, "SIGKILL");
  while (existsSync(`/proc/${pid}`) && processState(pid) !== "Z") await Bun.sleep(10);
}

/** Runs a command to completion; resolves to its exit code and the `error` of its last stderr line. */
async function runRefused(command: string[], env: Record<string, string>, args: string[] = []) {
  const childEnv = cliEnv({ PORT: "0", HOST: "127.0.0.1", ...env });
  const child = Bun.spawn([...command, ...args], { cwd: ROOT, env: childEnv, stdout: "pipe", stderr: "pipe" });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  const last = stderr.trim().split("\n").at(-1) ?? "";
  let error = last;
  try {
    error = String(JSON.parse(last).error);
  } catch {}
  return { code, error };
}

/** The one-line refusal a second owner prints. */
const refusal = (dir: string, pid: number, host: string) => `the data directory ${dir} is in use by another process (PID ${pid} on host ${host}); stop it first, or give this one another DATA_DIR`;

/** Stops a server started under unshare: SIGTERM to the server itself (unshare ignores it), then its exit. */
async function stopInside(server: ServerProcess): Promise<number> {
  process.kill(childOf(server.pid), "SIGTERM");
  return server.stop("SIGTERM");
}

describe.skipIf(!namespacesAvailable)("the data-directory lock across PID and UTS namespaces", () => {
  beforeAll(async () => {
    // The same build as `bun run build`: the lock calls libc through bun:ffi, which must work in the binary.
    const build = Bun.spawn(["bun", "build", "--compile", "--minify", "--bytecode", "--compile-exec-argv=--smol", "src/index.ts", "--outfile", BINARY], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if ((await build.exited) !== 0) throw new Error(`build failed: ${await new Response(build.stderr).text()}`);
  }, 120_000);

  for (const [name, command] of [
    ["bun src/index.ts", SOURCE],
    ["the compiled binary", [BINARY]],
  ] as const) {
    test(`${name}: PID 1 killed with SIGKILL starts again as PID 1 of a new namespace; while it runs, PID 1 of another namespace refuses`, async () => {
      const dir = dataDir();
      const first = await startServer({ DATA_DIR: dir }, { command: asPid1([...command]) });
      expect(readFileSync(join(dir, ".lock"), "utf8")).toBe(`1 ${hostname()}\n`);
      await killHard(childOf(first.pid));
      await first.stop().catch(() => {});

      const second = await startServer({ DATA_DIR: dir }, { command: asPid1([...command]) });
      try {
        // A child process never inherits the lock (it would keep it after the server died).
        expect(lockDescriptorFlags(childOf(second.pid), dir) & O_CLOEXEC).toBe(O_CLOEXEC);
        const third = await runRefused(asPid1([...command]), { DATA_DIR: dir });
        expect(third.code).not.toBe(0);
        expect(third.error).toBe(refusal(dir, 1, hostname()));
      } finally {
        expect(await stopInside(second)).toBe(0);
      }
      // A clean stop leaves the file (deleting it would race with the next owner) but empty.
      expect(readFileSync(join(dir, ".lock"), "utf8")).toBe("");
    }, 120_000);
  }

  test("an owner under another host name (a rescheduled pod, a new container) blocks while alive and not after its death", async () => {
    const dir = dataDir();
    const podHost = "vet-clinic-pod-a";
    const first = await startServer({ DATA_DIR: dir }, { command: asPid1(SOURCE, podHost) });
    try {
      const refused = await runRefused(SOURCE, { DATA_DIR: dir });
      expect(refused.code).not.toBe(0);
      expect(refused.error).toBe(refusal(dir, 1, podHost));
      const fromAnotherPod = await runRefused(asPid1(SOURCE, "vet-clinic-pod-b"), { DATA_DIR: dir });
      expect(fromAnotherPod.error).toBe(refusal(dir, 1, podHost));
    } finally {
      await killHard(childOf(first.pid));
      await first.stop().catch(() => {});
    }
    const next = await startServer({ DATA_DIR: dir }, { command: asPid1(SOURCE, "vet-clinic-pod-b") });
    expect(readFileSync(join(dir, ".lock"), "utf8")).toBe("1 vet-clinic-pod-b\n");
    expect(await stopInside(next)).toBe(0);
  }, 120_000);

  test("an owner killed but not yet reaped by its parent (a zombie) does not block a restart", async () => {
    const dir = dataDir();
    // The shell becomes `sleep`, which never waits for its child: the killed server stays a zombie.
    const parent = await startServer({ DATA_DIR: dir }, { command: ["sh", "-c", `"$@" & exec sleep 600`, "sh", ...SOURCE] });
    try {
      const owner = childOf(parent.pid);
      expect(readFileSync(join(dir, ".lock"), "utf8")).toBe(`${owner} ${hostname()}\n`);
      await killHard(owner);
      expect(processState(owner)).toBe("Z");
      const next = await startServer({ DATA_DIR: dir });
      expect(processState(owner)).toBe("Z"); // still unreaped while the new owner runs
      expect(await next.stop()).toBe(0);
    } finally {
      await parent.stop("SIGTERM").catch(() => {});
    }
  }, 120_000);

  test("backup and restore take the same lock: refused while a server in another PID namespace owns the directory", async () => {
    // The lock is the subject here, not a brand-new directory: the backup starts on a migrated one.
    const dir = await seedDataDir(dataDir());
    const backup = Bun.spawn([BINARY, "backup"], { cwd: workDir, env: cliEnv({ DATA_DIR: dir }), stdout: "pipe", stderr: "pipe" });
    const [code, printed] = await Promise.all([backup.exited, new Response(backup.stdout).text()]);
    expect(code, printed).toBe(0);
    const file = /backup written: (\S+)/.exec(printed)?.[1];
    expect(file, printed).toBeDefined();
    const path = join(dir, "backups", file!);
    expect(existsSync(path)).toBe(true);

    const server = await startServer({ DATA_DIR: dir }, { command: asPid1([BINARY], "vet-clinic-pod-a") });
    try {
      const again = await runRefused([BINARY, "backup"], { DATA_DIR: dir });
      expect(again.code).not.toBe(0);
      expect(again.error).toBe(refusal(dir, 1, "vet-clinic-pod-a"));
      const restore = await runRefused([BINARY, "restore", path, "--force"], { DATA_DIR: dir });
      expect(restore.code).not.toBe(0);
      expect(restore.error).toBe(refusal(dir, 1, "vet-clinic-pod-a"));
    } finally {
      expect(await stopInside(server)).toBe(0);
    }
  }, 120_000);
});
