/**
 * REST lists at depth: GET /api/v1/visits first page, a page 900,000 rows deep through a cursor,
 * and the same depth through the offset form, over ~1M visits, in process (app.handle).
 */
import { createApp } from "../src/app";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase } from "../tests/helpers/database";
import { percentile } from "./lib/load";
import { databaseLabel, printTable } from "./lib/table";

const ROWS = Number(process.env.BENCH_VISITS ?? 1_000_000);
const DEPTH = Math.floor(ROWS * 0.9);
const database = await createTestDatabase();
const clock = new ManualClock("2026-06-01T12:00:00Z");
const { app, context } = createApp({ database, config: testConfig(), clock, logger: silentLogger });
const call = async (path: string, token?: string, json?: unknown) => {
  const response = await app.handle(new Request(`http://localhost${path}`, { method: json ? "POST" : "GET", headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: json ? JSON.stringify(json) : undefined }));
  return response.json() as Promise<any>;
};
const owner = await call("/api/v1/auth/register", undefined, { email: "deep@clinic.test", password: "a long password", name: "D", clinic_name: "Deep" });
const token = owner.access_token as string;
const tutor = await call("/api/v1/tutors", token, { name: "T" });
const patient = await call("/api/v1/patients", token, { tutor_id: tutor.id, name: "P", species: "dog" });

const seeded = performance.now();
for (let start = 0; start < ROWS; start += 100_000) {
  await database.query(
    `insert into visits (id, clinic_id, patient_id, status, scheduled_at, created_at, updated_at)
     select (lpad(to_hex(1700000000000 + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(g::text), 4, 15))::uuid,
            $1, $2, 'completed', to_timestamp(1700000000 + g), to_timestamp(1700000000 + g), to_timestamp(1700000000 + g)
     from generate_series($3::int, $4::int) g`,
    [owner.clinic.id, patient.id, start + 1, Math.min(start + 100_000, ROWS)],
  );
}
await database.query("analyze visits");
const seedSeconds = (performance.now() - seeded) / 1000;

// A cursor DEPTH rows deep: walk there once with the largest pages.
let cursor: string | null = null;
for (let seen = 0; seen < DEPTH; seen += 200) cursor = (await call(`/api/v1/visits?limit=200${cursor ? `&cursor=${cursor}` : ""}`, token)).next_cursor;

async function timed(label: string, path: string, repeats = 30) {
  const samples: number[] = [];
  for (let i = 0; i < repeats + 3; i++) {
    const started = performance.now();
    const page = await call(path, token);
    if (!Array.isArray(page.data) || page.data.length !== 50) throw new Error(`${label}: ${JSON.stringify(page).slice(0, 200)}`);
    if (i >= 3) samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { request: label, p50_ms: percentile(samples, 50).toFixed(2), p99_ms: percentile(samples, 99).toFixed(2) };
}

const rows = [
  await timed("first page (cursor form)", "/api/v1/visits?limit=50"),
  await timed(`page ${DEPTH.toLocaleString("en")} rows deep (cursor)`, `/api/v1/visits?limit=50&cursor=${cursor}`),
  await timed(`page ${DEPTH.toLocaleString("en")} rows deep (offset form)`, `/api/v1/visits?limit=50&offset=${DEPTH}`, 5),
];
await context.lifecycle.beforeClose();
await database.destroy();
printTable(`REST list depth — ${databaseLabel()}, ${ROWS.toLocaleString("en")} visits (seeded in ${seedSeconds.toFixed(1)} s)`, rows);
