/**
 * Keeps a busy process's resident memory near a soft limit. Under load the service makes
 * garbage faster than the collector's own pace returns it (answers, protocol buffers, usage
 * rows at thousands of calls a second), and resident memory climbs far past what the live data
 * needs. Checked forty times a second (a look reads one number), a process over the limit runs
 * a full collection, which gives the memory back; under the limit nothing is done, so a quiet
 * server pays nothing. Frequent looks keep the peak near the limit: under the benchmarks' load
 * the process makes tens of megabytes of garbage between two looks ten times a second.
 *
 * What a collection cannot return (the embedded database's memory, which never shrinks, and
 * the code) can keep a process over the limit for good. Collecting at every look then frees
 * nothing and burns a core, so after a collection that left the process over the limit, the
 * next one waits until resident memory has grown by another step.
 */
export interface MemoryGovernorOptions {
  limitBytes: number;
  /** How much resident memory must grow after a collection that left it over the limit before the next (default: a thirty-second of the limit, at least 8 MB). */
  stepBytes?: number;
  /** Resident memory now (the process's by default). */
  residentBytes?: () => number;
  /** A full, synchronous collection (Bun's by default). */
  collect?: () => void;
}

export class MemoryGovernor {
  /** Full collections run because the process was over the limit. */
  collections = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly residentBytes: () => number;
  private readonly collect: () => void;
  private readonly stepBytes: number;
  /** Resident memory right after the last collection, while the process stays over the limit. */
  private residentAfterCollection = 0;

  constructor(private readonly options: MemoryGovernorOptions) {
    this.residentBytes = options.residentBytes ?? (() => process.memoryUsage.rss());
    this.collect = options.collect ?? (() => Bun.gc(true));
    this.stepBytes = options.stepBytes ?? Math.max(8 * 1024 * 1024, options.limitBytes / 32);
  }

  /** One look: collects when over the limit, and had grown by a step since a collection that could not bring it under. */
  check(): void {
    const resident = this.residentBytes();
    if (resident <= this.options.limitBytes) {
      this.residentAfterCollection = 0;
      return;
    }
    if (this.residentAfterCollection && resident < this.residentAfterCollection + this.stepBytes) return;
    this.collect();
    this.collections++;
    this.residentAfterCollection = this.residentBytes();
  }

  start(intervalMs = 25): void {
    if (this.options.limitBytes <= 0) return;
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
