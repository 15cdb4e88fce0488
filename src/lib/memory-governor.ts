/**
 * Keeps a busy process's resident memory near a soft limit. Under load the service makes
 * garbage faster than the collector's own pace returns it (answers, protocol buffers, usage
 * rows at thousands of calls a second), and resident memory climbs far past what the live data
 * needs. Checked a few times a second, a process over the limit runs a full collection, which
 * gives the memory back; under the limit nothing is done, so a quiet server pays nothing.
 */
export interface MemoryGovernorOptions {
  limitBytes: number;
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

  constructor(private readonly options: MemoryGovernorOptions) {
    this.residentBytes = options.residentBytes ?? (() => process.memoryUsage.rss());
    this.collect = options.collect ?? (() => Bun.gc(true));
  }

  /** One look: collects when over the limit. */
  check(): void {
    if (this.residentBytes() <= this.options.limitBytes) return;
    this.collect();
    this.collections++;
  }

  start(intervalMs = 100): void {
    if (this.options.limitBytes <= 0) return;
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
