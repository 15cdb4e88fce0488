/**
 * Availability for 7 days in a clinic with 10 vets, 5 rooms and 5,000 future visits: the route
 * (GET /api/v1/availability, in process) against the same run's bare query, the read of the
 * visits it must look at (the floor any availability answer pays).
 * Target: p95 under 50 ms on either database.
 */
import { createApp } from "../src/app";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase } from "../tests/helpers/database";
import { percentile } from "./lib/load";
import { databaseLabel, printTable } from "./lib/table";

const VETS = 10;
const ROOMS = 5;
const VISITS = 5_000;
const database = await createTestDatabase();
const clock = new ManualClock("2026-06-01T12:00:00Z");
const { app, context } = createApp({ database, config: testConfig(), clock, logger: silentLogger });
const call = async (path: string, token?: string, json?: unknown) => {
  const response = await app.handle(new Request(`http://localhost${path}`, { method: json ? "POST" : "GET", headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: json ? JSON.stringify(json) : undefined }));
  return response.json() as Promise<any>;
};
const owner = await call("/api/v1/auth/register", undefined, { email: "calendar@clinic.test", password: "a long password", name: "O", clinic_name: "Calendar", timezone: "America/Santiago" });
const token = owner.access_token as string;
const vetIds: string[] = [];
for (let i = 0; i < VETS; i++) vetIds.push((await call("/api/v1/users", token, { email: `vet${i}@clinic.test`, name: `Vet ${i}`, role: "vet", password: "a long password" })).id);
for (let i = 0; i < ROOMS; i++) await call("/api/v1/rooms", token, { name: `Box ${i}` });
const type = await call("/api/v1/appointment-types", token, { name: "Consulta", duration_minutes: 30, buffer_after_minutes: 5, room_required: true });
const tutor = await call("/api/v1/tutors", token, { name: "T" });
const patient = await call("/api/v1/patients", token, { tutor_id: tutor.id, name: "P", species: "dog" });

// 500 future visits per vet, back to back from tomorrow 12:00Z, 20 minutes each every 30 minutes.
await database.query(
  `insert into visits (id, clinic_id, patient_id, vet_id, status, scheduled_at, ends_at, created_at, updated_at)
   select (lpad(to_hex(1780000000000 + g), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(g::text), 4, 15))::uuid,
          $1, $2, ($3::uuid[])[1 + g % ${VETS}], 'scheduled',
          '2026-06-02T12:00:00Z'::timestamptz + make_interval(mins => 30 * (g / ${VETS})),
          '2026-06-02T12:20:00Z'::timestamptz + make_interval(mins => 30 * (g / ${VETS})), now(), now()
   from generate_series(0, ${VISITS - 1}) g`,
  [owner.clinic.id, patient.id, vetIds],
);
await database.query("analyze visits");

async function timed(label: string, run: () => Promise<unknown>, repeats = 60) {
  const samples: number[] = [];
  for (let i = 0; i < repeats + 5; i++) {
    const started = performance.now();
    await run();
    if (i >= 5) samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { request: label, p50_ms: percentile(samples, 50).toFixed(2), p95_ms: percentile(samples, 95).toFixed(2), p99_ms: percentile(samples, 99).toFixed(2) };
}

const path = `/api/v1/availability?appointment_type_id=${type.id}&from=2026-06-08&to=2026-06-14`;
const sample = await call(path, token);
if (!Array.isArray(sample.data)) throw new Error(JSON.stringify(sample).slice(0, 300));
const rows = [
  await timed("bare query: the week's live visits of the vets and rooms", () =>
    database.query("select id, vet_id, room_id, scheduled_at, ends_at from visits where clinic_id = $1 and deleted_at is null and status not in ('cancelled', 'no_show') and scheduled_at > $2 and scheduled_at < $3", [owner.clinic.id, "2026-06-06T04:00:00Z", "2026-06-17T04:00:00Z"]),
  ),
  await timed(`GET /availability, 7 days (${sample.data.length} slots)`, () => call(path, token)),
];
await context.lifecycle.beforeClose();
await database.destroy();
printTable(`Availability — ${databaseLabel()}, ${VETS} vets, ${ROOMS} rooms, ${VISITS.toLocaleString("en")} future visits`, rows);
