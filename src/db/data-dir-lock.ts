import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

/**
 * One owner per embedded data directory. PGlite has no protection of its own against two
 * processes writing one directory, so the first process creates `DATA_DIR/.lock` exclusively
 * (O_EXCL) with its PID; another refuses to start while that PID is alive. A lock left by a
 * process that died (SIGKILL, power loss) is recognised by its PID no longer running and taken
 * over. Commands that change the directory offline (restore) take the same lock.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
  ) {
    super(`the data directory ${dataDir} is in use by another process (PID ${ownerPid}); stop it first, or give this one another DATA_DIR`);
    this.name = "DataDirLockedError";
  }
}

export interface DataDirLock {
  path: string;
  release(): void;
}

const LOCK_FILE = ".lock";

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user, so it is running.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(path: string): { pid: number; host: string } | undefined {
  try {
    const [pid, host] = readFileSync(path, "utf8").trim().split(/\s+/);
    return { pid: Number(pid), host: host ?? "" };
  } catch {
    return undefined;
  }
}

/** Takes the lock on `dataDir` (which must exist) or throws DataDirLockedError naming the owner. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid} ${hostname()}\n`);
      closeSync(fd);
      let released = false;
      return {
        path,
        release() {
          if (released) return;
          released = true;
          if (readOwner(path)?.pid === process.pid) unlinkSync(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const owner = readOwner(path);
    // A lock from another host (a shared filesystem) cannot be checked: it is respected.
    if (owner && Number.isInteger(owner.pid) && (owner.host !== hostname() || isRunning(owner.pid))) throw new DataDirLockedError(dir, owner.pid);
    try {
      unlinkSync(path); // stale: its process is gone
    } catch {}
  }
  throw new DataDirLockedError(dir, readOwner(path)?.pid ?? 0);
}
