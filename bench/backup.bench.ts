/**
 * What a backup costs the clinic while it serves: the latency of writes (POST /api/v1/tutors)
 * with no backup running (the baseline) and with backups running back to back, on the demo
 * clinic and on a larger one (BENCH_BACKUP_VISITS extra visits), plus the backup's own times.
 * Embedded database only: a PostgreSQL server's backups are its operator's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { seedDemo } from "../src/cli/seed";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase } from "../tests/helpers/database";
import { median, percentile } from "./lib/load";
import { printTable } from "./lib/table";

if (process.env.DATABASE_URL?.startsWith("postgres")) {
  console.log("\n### Backups — skipped: the server backs up only the embedded database\n");
  process.exit(0);
}

const WRITES = 200;
const EXTRA_VISITS = Number(process.env.BENCH_BACKUP_VISITS ?? 100_000);

async function measure(label: string, extraVisits: number) {
  const dir = mkdtempSync(join(tmpdir(), "vet-bench-backup-"));
  const database = await createTestDatabase();
  const clock = new ManualClock();
  const demo = await seedDemo(database, clock, extraVisits ? "large" : "small", { largeVisitCount: extraVisits });
  const { app, context } = createApp({ database, config: testConfig({ backup: { dir, intervalMs: null, keep: 2 } }), clock, logger: silentLogger });
  const login = await (await app.handle(new Request("http://localhost/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(demo.owner) }))).json() as { access_token: string };
  const write = async () => {
    const started = performance.now();
    const response = await app.handle(new Request("http://localhost/api/v1/tutors", { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${login.access_token}` }, body: JSON.stringify({ name: "Bench tutor" }) }));
    if (response.status !== 201) throw new Error(`write failed: ${response.status} ${await response.text()}`);
    return performance.now() - started;
  };
  const writes = async () => {
    const samples: number[] = [];
    for (let i = 0; i < WRITES; i++) samples.push(await write());
    return samples.sort((a, b) => a - b);
  };
  await writes(); // warm-up
  const baseline = await writes();
  // One writer keeps writing while five backups are taken, a moment apart (as a schedule or an
  // owner would take them, not back to back).
  let running = true;
  const during: number[] = [];
  const writer = (async () => {
    while (running) during.push(await write());
  })();
  const backups: { snapshot_ms: number; total_ms: number; size_bytes: number }[] = [];
  for (let i = 0; i < 5; i++) {
    await Bun.sleep(100);
    const taken = await context.backups!.store.backupNow();
    backups.push({ ...taken.timings!, size_bytes: taken.size_bytes });
  }
  await Bun.sleep(100);
  running = false;
  await writer;
  during.sort((a, b) => a - b);
  await context.lifecycle.beforeClose();
  await database.destroy();
  rmSync(dir, { recursive: true, force: true });
  return [
    { clinic: label, writes: "no backup (baseline)", p50_ms: percentile(baseline, 50).toFixed(2), p99_ms: percentile(baseline, 99).toFixed(2), max_ms: baseline.at(-1)!.toFixed(1), backup: "" },
    {
      clinic: label,
      writes: `during 5 backups (${during.length} writes)`,
      p50_ms: percentile(during, 50).toFixed(2),
      p99_ms: percentile(during, 99).toFixed(2),
      max_ms: during.at(-1)!.toFixed(1),
      backup: `${backups.length} taken; read ${median(backups.map((b) => b.snapshot_ms))} ms (writes wait), whole ${median(backups.map((b) => b.total_ms))} ms, ${(median(backups.map((b) => b.size_bytes)) / 1024).toFixed(0)} KiB`,
    },
  ];
}

const rows = [...(await measure("demo (420 visits)", 0)), ...(await measure(`demo + ${EXTRA_VISITS.toLocaleString("en")} visits`, EXTRA_VISITS))];
printTable(`Backups while serving — embedded PGlite, one writer (baseline: ${WRITES} writes)`, rows);
