import { dlopen, FFIType, read } from "bun:ffi";
import { closeSync, constants as fsConstants, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { constants as osConstants, hostname } from "node:os";
import { join, resolve } from "node:path";

/**
 * One owner per embedded data directory. PGlite has no protection of its own against two
 * processes writing one directory, so the owner holds an exclusive flock(2) on `DATA_DIR/.lock`
 * through a descriptor it keeps open for as long as it owns the directory. The kernel drops that
 * lock when the descriptor closes, however the process ends (SIGKILL, the OOM killer, a crash of
 * a container's PID 1), before the process is even reaped, so a stale lock cannot exist and
 * nothing has to guess whether an owner is still alive: PIDs repeat across PID namespaces and
 * host names change with every new container. The PID and host written into the file only name
 * the owner in the refusal. Commands that change the directory offline (restore, move) take the
 * same lock.
 *
 * flock and not fcntl(F_SETLK): a POSIX record lock belongs to the process, so a second open in
 * the same process would not conflict and closing any descriptor of the file (even one opened
 * only to read the owner) would drop it. A flock belongs to the open file description, on Linux
 * and macOS alike.
 */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number | undefined,
    readonly ownerHost: string | undefined,
  ) {
    const owner = ownerPid === undefined ? "" : ` (PID ${ownerPid}${ownerHost ? ` on host ${ownerHost}` : ""})`;
    super(`the data directory ${dataDir} is in use by another process${owner}; stop it first, or give this one another DATA_DIR`);
    this.name = "DataDirLockedError";
  }
}

export interface DataDirLock {
  path: string;
  release(): void;
}

const LOCK_FILE = ".lock";
const LOCK_EX = 2;
const LOCK_NB = 4;

/** The C library's names: glibc, musl (Alpine) and macOS; Bun's FFI opens it in the compiled binary too. */
const LIBC_NAMES: Record<string, string[]> = {
  linux: ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, "libc.so"],
  darwin: ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"],
};
/** Where each C library keeps the calling thread's errno. */
const ERRNO_FUNCTION: Record<string, string> = { linux: "__errno_location", darwin: "__error" };

/**
 * flock(fd, operation) in the C library: 0, or the errno it failed with. The library is opened
 * for the one call and closed again (about a millisecond, once per start), so nothing of it
 * stays in the module.
 */
function flock(fd: number, operation: number): number {
  const errnoFunction = ERRNO_FUNCTION[process.platform];
  const names = LIBC_NAMES[process.platform];
  if (!errnoFunction || !names) throw new Error(`the data-directory lock needs flock(2), which this platform (${process.platform}) does not have; use DATABASE_URL`);
  const failures: string[] = [];
  for (const name of names) {
    let library;
    try {
      library = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [errnoFunction]: { args: [], returns: FFIType.ptr },
      });
    } catch (error) {
      failures.push(`${name}: ${(error as Error).message}`);
      continue;
    }
    try {
      if (library.symbols.flock(fd, operation) === 0) return 0;
      const errnoLocation = library.symbols[errnoFunction]!();
      return errnoLocation ? read.i32(errnoLocation, 0) : -1;
    } finally {
      library.close();
    }
  }
  throw new Error(`cannot load the C library for the data-directory lock (${failures.join("; ")})`);
}

function readOwner(path: string): { pid: number; host: string } | undefined {
  try {
    const [pid, host] = readFileSync(path, "utf8").trim().split(/\s+/);
    return pid && /^\d+$/.test(pid) ? { pid: Number(pid), host: host ?? "" } : undefined;
  } catch {
    return undefined;
  }
}

const errnoName = (code: number) => Object.entries(osConstants.errno).find(([, value]) => value === code)?.[0] ?? `errno ${code}`;

/** Takes the lock on `dataDir` (which must exist) or throws DataDirLockedError naming the owner. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  const path = join(dir, LOCK_FILE);
  // The file stays after release: deleting it would let one process lock the unlinked file while
  // another creates and locks a new one.
  const fd = openSync(path, fsConstants.O_RDWR | fsConstants.O_CREAT, 0o600);
  const code = flock(fd, LOCK_EX | LOCK_NB);
  if (code !== 0) {
    closeSync(fd);
    if (code === osConstants.errno.EWOULDBLOCK || code === osConstants.errno.EAGAIN) {
      const owner = readOwner(path);
      throw new DataDirLockedError(dir, owner?.pid, owner?.host);
    }
    throw Object.assign(new Error(`cannot lock ${path} (flock: ${errnoName(code)}); DATA_DIR must be on a filesystem that supports file locks`), { code: errnoName(code) });
  }
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${process.pid} ${hostname()}\n`, 0);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      try {
        ftruncateSync(fd, 0); // nobody owns it now; the next owner writes its own name
      } finally {
        closeSync(fd); // closing the descriptor is what releases the lock
      }
    },
  };
}
