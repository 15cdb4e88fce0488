/**
 * A thousand clinics on one PostgreSQL database, each as fast as if it were alone.
 *
 * Creates two databases on DATABASE_URL's server: one with an ordinary clinic alone, and one
 * with N clinics (default 1,000) of the same ordinary shape (300 tutors, 400 patients, 3,000
 * visits, with their invoices, payments, vaccinations, notes and audit events) plus one big
 * clinic (100,000 visits), generated in SQL (bench/lib/clinics-at-scale.ts). Then it asks each
 * everyday route, one request at a time through the app (app.handle: auth, validation, the
 * service, the database), of the clinic alone, of an ordinary clinic among the N and of the big
 * one, and prints p50/p95 for each beside the ratio to the clinic alone, and the database's side
 * of one call (pages touched, execution time under EXPLAIN ANALYZE), which the machine's load
 * moves far less. Then the assistant's side: the starter reports and the documented
 * query_database examples; and what each clinic-first index costs (size, µs per row written).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bun bench/scale.bench.ts [--clinics 1000] [--samples 40] [--keep]
 *
 * Targets: every route within 1.5× of the clinic alone for an ordinary clinic; p95 ≤ 50 ms for
 * the big one. `--clinics 50` is a quick run; `--keep` leaves the databases for EXPLAIN.
 */
import { parseArgs } from "node:util";
import { createApp } from "../src/app";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../tests/helpers/database";
import { BIG, fillClinics, generatedClinicId, NOW, ORDINARY, type ClinicToFill } from "./lib/clinics-at-scale";
import { CLINIC_FIRST_INDEXES, indexCosts } from "./lib/index-costs";
import { percentile } from "./lib/load";
import { printTable, reportTarget } from "./lib/table";

const { values: args } = parseArgs({
  options: { clinics: { type: "string", default: process.env.BENCH_SCALE_CLINICS ?? "1000" }, samples: { type: "string", default: "40" }, keep: { type: "boolean", default: false } },
});
const CLINICS = Number(args.clinics);
const SAMPLES = Number(args.samples);
/** The assistant's analyst queries take up to seconds on the big clinic: fewer samples of them. */
const MCP_SAMPLES = Math.min(SAMPLES, 10);
if (!POSTGRES_URL) {
  console.log("\n### Scale (many clinics on one database)\n\nSkipped: it runs on PostgreSQL only (set DATABASE_URL=postgres://…).");
  process.exit(0);
}

const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
const progress = (message: string) => console.error(`[scale ${elapsed()}] ${message}`);

/** One app over a database, with a clock at the data's present and a caller for its routes. */
function appOver(database: TestDatabase) {
  const { app, context } = createApp({ database, config: testConfig(), clock: new ManualClock(NOW), logger: silentLogger });
  const call = async (method: string, path: string, token?: string, json?: unknown) => {
    const response = await app.handle(
      new Request(`http://localhost${path}`, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: json === undefined ? undefined : JSON.stringify(json) }),
    );
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  return { app, context, call };
}
type App = ReturnType<typeof appOver>;

interface Probe {
  label: string;
  app: App;
  token: string;
  apiKey: string;
  clinicId: string;
  patientId: string;
}

/** Registers a clinic through the API (its owner and token) with unlimited MCP use. */
async function register(app: App, database: TestDatabase, name: string) {
  const owner = await app.call("POST", "/api/v1/auth/register", undefined, { email: `${name}@scale.test`, password: "a long password", name, clinic_name: name });
  await database.query("UPDATE clinics SET plan = 'enterprise', burst_per_minute = 1000000000 WHERE id = $1", [owner.clinic.id]);
  return { token: owner.access_token as string, clinicId: owner.clinic.id as string };
}

/** After the data is in: its API key, saved starter reports, and a patient with a long record. */
async function probe(label: string, app: App, database: TestDatabase, clinic: { token: string; clinicId: string }): Promise<Probe> {
  const key = await app.call("POST", "/api/v1/mcp/keys", clinic.token, { name: "scale", scopes: ["read", "query", "clinic_context"], rate_limit_per_day: 1_000_000 });
  const { templates } = await app.call("GET", "/api/v1/mcp/reports/templates", clinic.token);
  for (const template of templates) await app.call("POST", "/api/v1/mcp/reports", clinic.token, template);
  const [patient] = await database.query<{ id: string }>(
    "SELECT patient_id AS id FROM visits WHERE clinic_id = $1 AND deleted_at IS NULL GROUP BY patient_id ORDER BY count(*) DESC, patient_id LIMIT 1",
    [clinic.clinicId],
  );
  return { label, app, token: clinic.token, apiKey: key.api_key, clinicId: clinic.clinicId, patientId: patient!.id };
}

const analyze = async (database: TestDatabase) => {
  // A server's autovacuum would have done both by now: statistics, and the visibility map.
  await database.maintenanceQuery("VACUUM (ANALYZE)");
};

// 1. The clinic alone.
progress("creating the database of the clinic alone");
const aloneDb = await createTestDatabase();
const aloneApp = appOver(aloneDb);
const aloneClinic = await register(aloneApp, aloneDb, "alone");
await fillClinics(aloneDb, [{ id: aloneClinic.clinicId, shape: ORDINARY }]);
await analyze(aloneDb);
const alone = await probe("alone", aloneApp, aloneDb, aloneClinic);

// 2. N clinics and the big one on one database.
progress(`creating the database of ${CLINICS.toLocaleString("en")} clinics and the big one`);
const sharedDb = await createTestDatabase();
const sharedApp = appOver(sharedDb);
const ordinaryClinic = await register(sharedApp, sharedDb, "ordinary");
const bigClinic = await register(sharedApp, sharedDb, "big");
const clinics: ClinicToFill[] = [
  { id: ordinaryClinic.clinicId, shape: ORDINARY },
  { id: bigClinic.clinicId, shape: BIG },
  ...Array.from({ length: CLINICS - 1 }, (_, i) => ({ id: generatedClinicId(i + 1), shape: ORDINARY, create: true })),
];
const totalVisits = clinics.reduce((sum, c) => sum + c.shape.visits, 0);
let lastTable = "";
await fillClinics(sharedDb, clinics, {
  rebuildIndexes: true,
  progress: ({ table, rows, totalRows }) => {
    if (table.startsWith("index ")) progress(`${table} built (${rows} of ${totalRows})`);
    else if (table !== lastTable || rows === totalRows) progress(`${table}: ${rows.toLocaleString("en")} of ${totalRows.toLocaleString("en")} rows`);
    lastTable = table;
  },
});
progress("vacuum and analyze");
await analyze(sharedDb);
const [size] = await sharedDb.query<{ size: string }>("SELECT pg_size_pretty(pg_database_size(current_database())) AS size");
progress(`generated: ${clinics.length.toLocaleString("en")} clinics, ${totalVisits.toLocaleString("en")} visits, ${size!.size}`);
const ordinary = await probe("ordinary", sharedApp, sharedDb, ordinaryClinic);
const big = await probe("big", sharedApp, sharedDb, bigClinic);

// 3. The everyday routes, one request at a time.
const since = new Date(Date.parse(NOW) - 7 * 86_400_000).toISOString();
const ROUTES: { label: string; path: (p: Probe) => string }[] = [
  { label: "GET /visits", path: () => "/api/v1/visits" },
  { label: "GET /visits?updated_since (7 days)", path: () => `/api/v1/visits?updated_since=${since}` },
  { label: "GET /visits?date_from&date_to (4 weeks)", path: () => "/api/v1/visits?date_from=2026-05-01&date_to=2026-05-28" },
  { label: "GET /operations/visits (today)", path: () => "/api/v1/operations/visits?date_from=2026-06-01&date_to=2026-06-01" },
  { label: "GET /tutors", path: () => "/api/v1/tutors" },
  { label: "GET /tutors?updated_since", path: () => `/api/v1/tutors?updated_since=${since}` },
  { label: "GET /tutors?q=mart", path: () => "/api/v1/tutors?q=mart" },
  { label: "GET /patients?q=luna", path: () => "/api/v1/patients?q=luna" },
  { label: "GET /patients?updated_since", path: () => `/api/v1/patients?updated_since=${since}` },
  { label: "GET /patients/{id}/timeline", path: (p) => `/api/v1/patients/${p.patientId}/timeline` },
  { label: "GET /vaccinations/due", path: () => "/api/v1/vaccinations/due" },
  { label: "GET /billing/invoices", path: () => "/api/v1/billing/invoices" },
  { label: "GET /billing/invoices?updated_since", path: () => `/api/v1/billing/invoices?updated_since=${since}` },
  { label: "GET /billing/payments?updated_since", path: () => `/api/v1/billing/payments?updated_since=${since}` },
  { label: "GET /audit", path: () => "/api/v1/audit" },
  { label: "GET /audit?action=<rare>", path: () => "/api/v1/audit?action=invoice.voided" },
];

type Timing = { p50: number; p95: number };
/**
 * p50 and p95 (ms) of `SAMPLES` calls of each of `runs` after three to warm up, taken in turns
 * (one of each, then again), so that what else the machine does weighs on all of them alike.
 */
async function measure(runs: (() => Promise<unknown>)[], count = SAMPLES): Promise<Timing[]> {
  const samples: number[][] = runs.map(() => []);
  for (let i = 0; i < count + 3; i++) {
    for (const [n, run] of runs.entries()) {
      const t0 = performance.now();
      await run();
      if (i >= 3) samples[n]!.push(performance.now() - t0);
    }
  }
  return samples.map((s) => {
    s.sort((a, b) => a - b);
    return { p50: percentile(s, 50), p95: percentile(s, 95) };
  });
}
const ms = (value: number) => value.toFixed(1);
const pair = (m: { p50: number; p95: number }) => `${ms(m.p50)} / ${ms(m.p95)}`;

/**
 * The database's side of one call, which the machine's load moves far less than wall time: the
 * statements the route sends, captured, run again under EXPLAIN (ANALYZE, BUFFERS); the pages
 * they touch (shared buffers hit or read) and their execution time, summed.
 */
async function databaseSide(p: Probe, path: string): Promise<{ pages: number; ms: number }> {
  const database = p.app === aloneApp ? aloneDb : sharedDb;
  const session = (database.db as unknown as { session: { logger: { logQuery(sql: string, params: unknown[]): void } } }).session;
  const original = session.logger;
  const statements: { sql: string; params: unknown[] }[] = [];
  session.logger = { logQuery: (sql, params) => void (/^\s*(select|with)\b/i.test(sql) && statements.push({ sql, params })) };
  try {
    await p.app.call("GET", path, p.token);
  } finally {
    session.logger = original;
  }
  let pages = 0;
  let ms = 0;
  for (const statement of statements) {
    const [row] = await database.query<Record<string, unknown>>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.sql}`, statement.params);
    const json = Object.values(row!)[0];
    const [plan] = (typeof json === "string" ? JSON.parse(json) : json) as { Plan: Record<string, number>; "Execution Time": number }[];
    pages += (plan!.Plan["Shared Hit Blocks"] ?? 0) + (plan!.Plan["Shared Read Blocks"] ?? 0);
    ms += plan!["Execution Time"];
  }
  return { pages, ms };
}

const rows: Record<string, string>[] = [];
let misses = 0;
for (const route of ROUTES) {
  progress(`measuring ${route.label}`);
  const [tAlone, tOrdinary, tBig] = (await measure([alone, ordinary, big].map((p) => () => p.app.call("GET", route.path(p), p.token)))) as [Timing, Timing, Timing];
  const [dAlone, dOrdinary, dBig] = [await databaseSide(alone, route.path(alone)), await databaseSide(ordinary, route.path(ordinary)), await databaseSide(big, route.path(big))];
  const ratio = Math.max(tOrdinary.p50 / tAlone.p50, tOrdinary.p95 / tAlone.p95);
  const met = ratio <= 1.5 && tBig.p95 <= 50;
  if (!met) misses++;
  rows.push({
    route: route.label,
    "alone p50 / p95": pair(tAlone),
    "ordinary among N p50 / p95": pair(tOrdinary),
    "× alone (p50 · p95)": `${(tOrdinary.p50 / tAlone.p50).toFixed(2)} · ${(tOrdinary.p95 / tAlone.p95).toFixed(2)}`,
    "big p50 / p95": pair(tBig),
    target: met ? "✓" : ratio > 1.5 ? "**ordinary > 1.5×**" : "**big p95 > 50 ms**",
    "database: pages (alone · ordinary · big)": `${dAlone.pages} · ${dOrdinary.pages} · ${dBig.pages}`,
    "database: ms (alone · ordinary · big)": `${dAlone.ms.toFixed(2)} · ${dOrdinary.ms.toFixed(2)} · ${dBig.ms.toFixed(2)}`,
  });
}

// 4. The assistant: starter reports and the documented query_database examples, for the big clinic.
const REPORT_ARGUMENTS: Record<string, Record<string, unknown>> = {
  daily_revenue: { from: "2026-05-01", to: "2026-05-31" },
  weight_trend: { patient_id: big.patientId },
};
const EXAMPLES: { label: string; sql: string }[] = [
  { label: "count(*)", sql: "SELECT count(*) AS n FROM visits" },
  { label: "revenue by month", sql: "SELECT date_trunc('month', paid_at) AS month, sum(amount) AS revenue FROM payments GROUP BY 1 ORDER BY 1" },
  { label: "top 10 tutors by visits (join)", sql: "SELECT t.name, count(v.id) AS visits FROM tutors t JOIN patients p ON p.tutor_id = t.id JOIN visits v ON v.patient_id = p.id GROUP BY t.id, t.name ORDER BY visits DESC, t.name LIMIT 10" },
  { label: "200-row listing", sql: "SELECT id, patient_id, status, scheduled_at, reason FROM visits ORDER BY scheduled_at DESC LIMIT 200" },
  { label: "top tutors by spend", sql: "SELECT t.name, sum(pay.amount) AS spent FROM tutors t JOIN invoices i ON i.tutor_id = t.id JOIN payments pay ON pay.invoice_id = i.id GROUP BY t.id, t.name ORDER BY spent DESC LIMIT 10" },
];
const invoke = (p: Probe, tool: string, input: unknown) => p.app.call("POST", `/mcp/tools/${tool}/invoke`, p.apiKey, input);
const { templates } = await big.app.call("GET", "/api/v1/mcp/reports/templates", big.token);
const mcpRows: Record<string, string>[] = [];
const mcpCalls = [
  ...templates.map((template: { name: string }) => ({ label: `report_${template.name}`, tool: `report_${template.name}`, input: REPORT_ARGUMENTS[template.name] ?? {} })),
  ...EXAMPLES.map((example) => ({ label: `query_database: ${example.label}`, tool: "query_database", input: { sql: example.sql } })),
];
for (const mcpCall of mcpCalls) {
  progress(`measuring ${mcpCall.label}`);
  const [tAlone, tOrdinary, tBig] = (await measure([alone, ordinary, big].map((p) => () => invoke(p, mcpCall.tool, mcpCall.input)), MCP_SAMPLES)) as [Timing, Timing, Timing];
  mcpRows.push({
    "MCP call": mcpCall.label,
    "alone p50 / p95": pair(tAlone),
    "ordinary among N p50 / p95": pair(tOrdinary),
    "big p50 / p95": pair(tBig),
    "big p95 ≤ 50 ms": tBig.p95 <= 50 ? "✓" : "no",
  });
}

// 5. What the clinic-first indexes cost: size, and time added to each row written.
progress("measuring what the clinic-first indexes cost");
const costs = await indexCosts(sharedDb, CLINIC_FIRST_INDEXES);

const title = `${CLINICS.toLocaleString("en")} ordinary clinics (${ORDINARY.tutors} tutors, ${ORDINARY.patients} patients, ${ORDINARY.visits.toLocaleString("en")} visits) + one of ${BIG.visits.toLocaleString("en")} visits on one PostgreSQL database (${size!.size}), against the clinic alone; ms, sequential, ${SAMPLES} samples`;
printTable(`REST at scale — ${title}`, rows);
printTable(`MCP at scale — the same databases, ${MCP_SAMPLES} samples`, mcpRows);
printTable(
  "What each clinic-first index costs on the same database (size; µs added to each row inserted, best of three 5,000-row inserts with and without it)",
  costs.map((c) => ({ index: c.index, size: c.size, "insert µs/row (all indexes)": c.insertMicros.toFixed(1), "this index µs/row": c.indexMicros.toFixed(1) })),
);
console.log(`\nGenerated and measured in ${elapsed()}.`);
reportTarget({ target: "every everyday route of an ordinary clinic among 1,000 within 1.5× of the clinic alone; p95 ≤ 50 ms for the big one", measured: `${ROUTES.length - misses} of ${ROUTES.length} routes`, met: misses === 0 });

for (const app of [aloneApp, sharedApp]) await app.context.lifecycle.beforeClose();
if (args.keep) {
  console.error(`kept: ${aloneDb.url} and ${sharedDb.url}`);
  await aloneDb.close();
  await sharedDb.close();
} else {
  await aloneDb.destroy();
  await sharedDb.destroy();
}
