/**
 * A closed-loop HTTP load generator, run as its own process so that it does not share an
 * event loop with the server under test: `bun bench/lib/load.ts <json options>`.
 * Prints one JSON line: {requests, errors, seconds, rps, p50_ms, p99_ms}.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  warmupSeconds?: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
}

/** A process's times from /proc/<pid>/stat, in microseconds (100 ticks a second): its own, and its reaped children's. */
function processTimes(stat: string): { own: number; children: number } {
  const fields = stat.split(") ")[1]!.split(" ");
  return { own: (Number(fields[11]) + Number(fields[12])) * 10_000, children: (Number(fields[13]) + Number(fields[14])) * 10_000 };
}

/** User + system CPU time a process has used so far, in microseconds (Linux /proc). */
export function cpuMicros(pid: number): number {
  return processTimes(readFileSync(`/proc/${pid}/stat`, "utf8")).own;
}

/**
 * CPU time used so far by every PostgreSQL process on this machine (the benchmarks' server is
 * local), in microseconds: the database's share of a call, whichever backend served it. A
 * backend that ends is counted through the postmaster, which adds its children's time once it
 * has reaped them, so the total never goes back when a pool closes connections.
 */
export function postgresCpuMicros(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (!stat.includes(" (postgres) ")) continue;
      const times = processTimes(stat);
      total += times.own + times.children;
    } catch {
      // The process ended while being read.
    }
  }
  return total;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The middle value (the upper one of an even count), 0 for none. */
export const median = (values: number[]): number => percentile([...values].sort((a, b) => a - b), 50);

async function run(options: LoadOptions): Promise<LoadResult> {
  const init = { method: options.method ?? "GET", headers: options.headers, body: options.body };
  const phase = async (seconds: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    const deadline = performance.now() + seconds * 1000;
    const worker = async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          const response = await fetch(options.url, init);
          await response.arrayBuffer();
          if (!response.ok) errors++;
        } catch {
          errors++;
        }
        if (record) latencies.push(performance.now() - started);
      }
    };
    const began = performance.now();
    await Promise.all(Array.from({ length: options.connections }, worker));
    return { latencies, errors, elapsed: (performance.now() - began) / 1000 };
  };
  await phase(options.warmupSeconds ?? 1, false);
  const { latencies, errors, elapsed } = await phase(options.seconds, true);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds: Math.round(elapsed * 100) / 100,
    rps: Math.round(latencies.length / elapsed),
    p50_ms: Math.round(percentile(latencies, 50) * 100) / 100,
    p99_ms: Math.round(percentile(latencies, 99) * 100) / 100,
  };
}

/** Runs the generator in a child process and returns its figures. */
export async function loadFromChild(options: LoadOptions): Promise<LoadResult> {
  const child = Bun.spawn(["bun", import.meta.path, JSON.stringify(options)], { stdout: "pipe", stderr: "inherit" });
  const output = await new Response(child.stdout).text();
  if ((await child.exited) !== 0) throw new Error(`load generator failed: ${output}`);
  return JSON.parse(output.trim().split("\n").pop()!);
}

if (import.meta.main) {
  const options = JSON.parse(process.argv[2] ?? "{}") as LoadOptions;
  console.log(JSON.stringify(await run(options)));
}
