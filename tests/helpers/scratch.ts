import { readFileSync, statfsSync } from "node:fs";

const SHARED_MEMORY = "/dev/shm";
/** Room the whole suite's scratch files need at once (data directories, backups, two binaries): about 1 GB measured; twice that. */
const ROOM_NEEDED = 2 * 2 ** 30;

/**
 * Where the whole suite keeps its scratch files: the temporary directory (`TMPDIR`) set to the
 * machine's shared-memory file system when it has one, unless TMPDIR is set already.
 *
 * The suite creates and deletes tens of thousands of files (each server process starts on a copy
 * of a migrated data directory, backups, restores, two binaries). On ext4 each creation after many
 * deletions searches for an inode no deletion used recently; measured on the suite
 * (docs/benchmarks.md), that was a fifth of the run's CPU, spent in the kernel. tmpfs has no such
 * search. Only where it can be used: a tmpfs mount that allows running programs (the binary tests
 * run what they build there) with room to spare.
 */
export function inMemoryScratch(): Record<string, string> {
  if (process.env.TMPDIR) return {};
  try {
    const mount = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .map((line) => line.split(" "))
      .find(([, point]) => point === SHARED_MEMORY);
    if (!mount || mount[2] !== "tmpfs" || mount[3]?.split(",").includes("noexec")) return {};
    const room = statfsSync(SHARED_MEMORY);
    return room.bavail * room.bsize >= ROOM_NEEDED ? { TMPDIR: SHARED_MEMORY } : {};
  } catch {
    return {}; // not Linux, or nothing to read: the usual temporary directory
  }
}
