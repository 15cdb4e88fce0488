/**
 * The event log and webhook delivery, in process (app.handle):
 * - POST /api/v1/billing/payments p50 with the event log against without it, in one run: "without"
 *   disables the audit triggers and sends no change-context settings, as the service did before
 *   the event log; the two are interleaved in rounds so both see the same machine.
 * - Events delivered per second by one dispatcher to a receiver on 127.0.0.1.
 */
import { sql } from "drizzle-orm";
import { createApp } from "../src/app";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase } from "../tests/helpers/database";
import { percentile } from "./lib/load";
import { databaseLabel, printTable, reportTarget } from "./lib/table";

const PAYMENTS_PER_ROUND = Number(process.env.BENCH_PAYMENTS ?? 200);
const ROUNDS = 6;
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);

const database = await createTestDatabase();
const clock = new ManualClock("2026-06-01T12:00:00Z");
const config = testConfig({ webhooks: { dispatch: false, retryScheduleMs: [0, 1000], allowedNetworks: ["127.0.0.1/32"], allowHttp: true, timeoutMs: 15_000, dueDays: 7, dueHour: 8 } });
const { app, context } = createApp({ database, config, clock, logger: silentLogger });
const call = async (method: string, path: string, token?: string, json?: unknown) => {
  const response = await app.handle(new Request(`http://localhost${path}`, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: json ? JSON.stringify(json) : undefined }));
  const body = (await response.json()) as any;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
};
const owner = await call("POST", "/api/v1/auth/register", undefined, { email: "bench@clinic.test", password: "a long password", name: "B", clinic_name: "Bench" });
const token = owner.access_token as string;
const tutor = await call("POST", "/api/v1/tutors", token, { name: "T" });
const invoice = await call("POST", "/api/v1/billing/invoices", token, { tutor_id: tutor.id, items: [{ description: "Big", quantity: 1, unit_price: 1_000_000_000 }] });
await call("POST", `/api/v1/billing/invoices/${invoice.id}/emit`, token);

const settings = database.changeContexts.settings.bind(database.changeContexts);
type Mode = "without" | "settings only" | "with";
/** "settings only": the transaction-local settings are sent but the triggers are off, to split the cost. */
async function withEventLog(mode: Mode) {
  const verb = mode === "with" ? "ENABLE" : "DISABLE";
  for (const table of ["payments", "invoices"]) await database.query(`ALTER TABLE ${table} ${verb} TRIGGER audit_change`);
  database.changeContexts.settings = mode === "without" ? () => undefined : settings;
}

const samples: Record<Mode, number[]> = { with: [], without: [], "settings only": [] };
const MODES: Mode[] = ["without", "settings only", "with"];
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of round % 2 === 0 ? MODES : [...MODES].reverse()) {
    await withEventLog(mode);
    for (let i = 0; i < PAYMENTS_PER_ROUND + 5; i++) {
      const started = performance.now();
      await call("POST", "/api/v1/billing/payments", token, { invoice_id: invoice.id, amount: 1, method: "cash" });
      if (i >= 5) samples[mode].push(performance.now() - started);
    }
  }
}
await withEventLog("with");
const p = (mode: Mode, q: number) => percentile([...samples[mode]].sort((a, b) => a - b), q);
const added = (p("with", 50) / p("without", 50) - 1) * 100;

// Delivery: EVENTS tutors inserted in one statement (one event each), then drained by one dispatcher.
let received = 0;
const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (request) => (await request.text(), received++, new Response("ok")) });
await call("POST", "/api/v1/webhooks", token, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ["tutor.created"] });
await database.changeContexts.run({ now: () => clock.now() }, () =>
  database.db.transaction((tx) =>
    tx.execute(
      // Each row is its own change: the trigger writes one event and queues one delivery per row.
      sql`insert into tutors (id, clinic_id, name, created_at, updated_at) select gen_random_uuid(), ${owner.clinic.id}, 'Bulk ' || g, now(), now() from generate_series(1, ${EVENTS}) g`,
    ),
  ),
);
const started = performance.now();
while ((await context.webhooks.dispatcher.runOnce()) > 0);
const seconds = (performance.now() - started) / 1000;
receiver.stop(true);
const perSecond = received / seconds;

await context.lifecycle.beforeClose();
await database.destroy();

printTable(`Event log on a payment — ${databaseLabel()}, ${ROUNDS} interleaved rounds of ${PAYMENTS_PER_ROUND} payments each way`, [
  { mode: "without the event log", p50_ms: p("without", 50).toFixed(2), p99_ms: p("without", 99).toFixed(2) },
  { mode: "settings sent, triggers off", p50_ms: p("settings only", 50).toFixed(2), p99_ms: p("settings only", 99).toFixed(2) },
  { mode: "with the event log", p50_ms: p("with", 50).toFixed(2), p99_ms: p("with", 99).toFixed(2) },
  { mode: "added to p50", p50_ms: `${added.toFixed(1)} %`, p99_ms: "" },
]);
printTable(`Webhook delivery — ${databaseLabel()}, one dispatcher, receiver on 127.0.0.1`, [{ events: received, seconds: seconds.toFixed(2), per_second: perSecond.toFixed(0) }]);
reportTarget({ target: `event log adds ≤ 10 % to a payment's p50 (${databaseLabel()})`, measured: `${added.toFixed(1)} %`, met: added <= 10 });
reportTarget({ target: `≥ 200 events/s delivered by one instance (${databaseLabel()})`, measured: `${perSecond.toFixed(0)}/s`, met: perSecond >= 200 && received === EVENTS });
