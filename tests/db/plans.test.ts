/**
 * Every list and search route's SQL, exactly as the service sends it, is planned for its clinic:
 * on a database of many clinics (bench/lib/clinics-at-scale.ts) with fresh planner statistics,
 * each route is called through the app with its query variants (plain, delta sync, each filter
 * alone), every SELECT it sends is captured and run again under EXPLAIN ANALYZE, and the plan
 * fails on
 *   - a sequential scan of a clinic table (one with clinic_id): EXPLAIN runs with enable_seqscan
 *     off, so a sequential scan left in the plan means no index can serve the query at all, even
 *     on the small tables this database leaves small;
 *   - an index scan of a clinic table that is not driven by the clinic: its index condition does
 *     not name clinic_id, it is not a unique lookup, nor one parent's rows by the parent's id (an
 *     invoice's payments), and it is not the inner side of a nested loop (a join probing by the
 *     rows the clinic's scan found);
 *   - a scan that reads (returns or filters away) more than ROWS_READ rows of a clinic table for
 *     one page: the clinic under test has thousands of visits, so a list that walks all of them
 *     (a sort of everything, an unindexed filter, a join from the wrong side) is caught.
 * Routes come from the app's own route table (GET routes answering a cursor page), as in the
 * hostile-input suite: a new list joins this test; a filter it cannot give a value fails it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BIG, fillClinics, generatedClinicId, NOW, type ClinicShape } from "../../bench/lib/clinics-at-scale";
import { PlannerStatistics } from "../../src/db/planner-statistics";
import { ManualClock } from "../../src/lib/clock";
import { silentLogger } from "../../src/lib/logger";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { databaseKind } from "../helpers/database";

/** The clinic under test, a tenth of the big one, among small neighbours: a tenth of each table. */
const UNDER_TEST: ClinicShape = { tutors: BIG.tutors / 10, patients: BIG.patients / 10, visits: BIG.visits / 10 };
const NEIGHBOUR: ClinicShape = { tutors: 30, patients: 40, visits: 100 };
const NEIGHBOURS = 300;
/** Rows a scan may read for one page of 50 (the clinic under test has 1,000 tutors and 10,000 visits). */
const ROWS_READ = 500;

let t: TestApp;
let owner: ClinicSession;
const ids: Record<string, string> = {};

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Recheck Cond"?: string;
  "Parent Relationship"?: string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

let clinicTables: Set<string>;
let uniqueIndexes: Set<string>;
let indexTables: Map<string, string>;

beforeAll(async () => {
  t = await createTestApp({ clock: new ManualClock(NOW) });
  owner = await registerClinic(t);
  const clinics = [{ id: owner.clinic.id, shape: UNDER_TEST }, ...Array.from({ length: NEIGHBOURS }, (_, i) => ({ id: generatedClinicId(i + 1), shape: NEIGHBOUR, create: true }))];
  await fillClinics(t.database, clinics);
  // The records the generator leaves out, through the API: a webhook (with a delivery), a key, a report.
  const webhook = await owner.as<{ id: string }>("POST", "/api/v1/webhooks", { json: { url: "http://127.0.0.1:9/hook", events: ["*"] } });
  ids.webhook = webhook.body.id;
  ids.key = (await owner.as<{ id: string }>("POST", "/api/v1/mcp/keys", { json: { name: "plans", scopes: ["read"] } })).body.id;
  await owner.as("POST", "/api/v1/mcp/reports", { json: { name: "plans_report", title: "Plans", sql: "SELECT count(*) AS n FROM tutors" } });
  const [patient] = await t.database.query<{ id: string }>("SELECT patient_id AS id FROM visits WHERE clinic_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC LIMIT 1", [owner.clinic.id]);
  ids.patient = patient!.id;
  const [visit] = await t.database.query<{ id: string }>("SELECT id FROM visits WHERE clinic_id = $1 AND patient_id = $2 LIMIT 1", [owner.clinic.id, ids.patient]);
  ids.visit = visit!.id;
  const [tutor] = await t.database.query<{ id: string }>("SELECT tutor_id AS id FROM patients WHERE id = $1", [ids.patient]);
  ids.tutor = tutor!.id;
  const [payment] = await t.database.query<{ id: string; invoice_id: string }>("SELECT id, invoice_id FROM payments WHERE clinic_id = $1 LIMIT 1", [owner.clinic.id]);
  ids.payment = payment!.id;
  ids.invoice = payment!.invoice_id;
  // The reminder outbox the generator leaves out: one appointment reminder per visit of the clinic
  // under test (sent, suppressed or still queued), for its list, its delta sync and the timeline.
  // Loaded as the generator loads (no audit events, which the audit list's plans would read).
  await t.database.copyTransaction("load", async (session) => {
    await session.query("select set_config('app.audit', 'off', true)");
    await session.query(
      `insert into reminder_messages (id, clinic_id, created_at, updated_at, rule_id, kind, subject_id, patient_id, tutor_id, channel, due_at, expires_at, send_at, status, suppressed_reason, sent_at)
       select gen_random_uuid(), v.clinic_id, v.scheduled_at - interval '1 day', v.scheduled_at - interval '23 hours', '00000000-0000-7000-8000-000000000001', (array['appointment', 'vaccination_due', 'follow_up'])[1 + abs(hashtext(v.id::text || 'kind')) % 3], v.id, v.patient_id, p.tutor_id, 'email',
              v.scheduled_at, v.scheduled_at, v.scheduled_at - interval '1 day', s.status, case when s.status = 'suppressed' then 'late' end, case when s.status = 'sent' then v.scheduled_at - interval '1 day' end
       from visits v join patients p on p.id = v.patient_id
       cross join lateral (select case abs(hashtext(v.id::text)) % 10 when 0 then 'suppressed' when 1 then 'queued' else 'sent' end as status) s
       where v.clinic_id = $1 and v.deleted_at is null`,
      [owner.clinic.id],
    );
  });
  await new PlannerStatistics(t.database, silentLogger).refresh();
  clinicTables = new Set((await t.database.query<{ name: string }>("SELECT table_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'clinic_id'")).map((r) => r.name));
  const indexes = await t.database.query<{ name: string; tab: string; is_unique: boolean }>(
    "SELECT c.relname AS name, t.relname AS tab, i.indisunique AS is_unique FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = 'public'",
  );
  uniqueIndexes = new Set(indexes.filter((i) => i.is_unique).map((i) => i.name));
  indexTables = new Map(indexes.map((i) => [i.name, i.tab]));
}, 300_000);
afterAll(() => t?.close());

/** A value for each filter a list declares; a new filter fails the test until it has one here. */
const SAMPLES: Record<string, (route: string) => string> = {
  q: () => "mart",
  date_from: () => "2026-05-01",
  date_to: () => "2026-05-28",
  from: () => "2026-06-01",
  to: () => "2026-07-01",
  status: (route) => ({ "/api/v1/visits": "completed", "/api/v1/operations/visits": "completed", "/api/v1/alerts": "active", "/api/v1/billing/invoices": "paid" })[route] ?? "accepted",
  kind: (route) => ({ "/api/v1/patients/:id/timeline": "visit,invoice", "/api/v1/reminders": "vaccination_due" })[route] ?? "vaccine_due",
  species: () => "cat",
  patient_id: () => ids.patient!,
  tutor_id: () => ids.tutor!,
  vet_id: () => owner.user.id,
  actor_id: () => owner.user.id,
  entity_type: () => "visit",
  entity_id: () => ids.visit!,
  action: () => "invoice.voided",
  reminder_status: () => "pending",
  order: () => "desc",
  invoice_id: () => ids.invoice!,
  payment_id: () => ids.payment!,
  method: () => "card",
  doc_type: () => "39",
  api_key_id: () => ids.key!,
  tool: () => "query_database",
  outcome: () => "blocked",
  state: () => "queued",
  channel: () => "email",
  // No rule exists: the plan, not the answer, is what is checked.
  rule_id: () => "00000000-0000-7000-8000-000000000000",
  updated_since: () => new Date(Date.parse(NOW) - 7 * 86_400_000).toISOString(),
};
/** Paging fields, not filters; the offset form counts the whole list by design. */
const PAGING = new Set(["limit", "cursor", "offset"]);
/** Each `:id` a list path takes, by the path's start. */
const pathId = (path: string) =>
  path.startsWith("/api/v1/patients/") ? ids.patient! : path.startsWith("/api/v1/visits/") ? ids.visit! : path.startsWith("/api/v1/users/") ? owner.user.id : ids.webhook!;

interface ListRoute {
  path: string;
  query: string[];
}
type Schema = { properties?: Record<string, Schema>; anyOf?: Schema[] };
const answersAPage = (schema: Schema | undefined): boolean => Boolean(schema && (schema.properties?.next_cursor || schema.anyOf?.some(answersAPage)));

function listRoutes(): ListRoute[] {
  return (t.app.routes as { method: string; path: string; hooks?: { query?: Schema; response?: Record<number, Schema> } }[])
    .filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/") && answersAPage(r.hooks?.response?.[200]))
    .map((r) => ({ path: r.path.replace(/\/$/, ""), query: Object.keys(r.hooks?.query?.properties ?? {}).filter((name) => !PAGING.has(name)) }));
}

/** Every SELECT the app sends while `work` runs, with its parameters. */
async function capture(work: () => Promise<void>): Promise<{ sql: string; params: unknown[] }[]> {
  const session = (t.database.db as unknown as { session: { logger: { logQuery(sql: string, params: unknown[]): void } } }).session;
  const original = session.logger;
  const statements: { sql: string; params: unknown[] }[] = [];
  session.logger = { logQuery: (sql, params) => void (/^\s*(select|with)\b/i.test(sql) && statements.push({ sql, params })) };
  try {
    await work();
  } finally {
    session.logger = original;
  }
  return statements;
}

const nodes = (node: PlanNode, parent?: PlanNode): { node: PlanNode; parent?: PlanNode }[] => [{ node, parent }, ...(node.Plans ?? []).flatMap((child) => nodes(child, node))];

/** A plan in one line, for a failure's message: each node, its index and its condition. */
const outline = (node: PlanNode): string =>
  `${node["Node Type"]}${node["Index Name"] ? ` ${node["Index Name"]}` : node["Relation Name"] ? ` ${node["Relation Name"]}` : ""}${node["Index Cond"] ? ` [${node["Index Cond"]}]` : ""}${node.Plans ? ` (${node.Plans.map(outline).join(", ")})` : ""}`;

/** What is wrong with a statement's plan for the clinic, if anything. */
function problems(plan: PlanNode): string[] {
  const found: string[] = [];
  for (const { node, parent } of nodes(plan)) {
    const table = node["Relation Name"] ?? (node["Index Name"] ? indexTables.get(node["Index Name"]) : undefined);
    if (!table || !clinicTables.has(table)) continue;
    const type = node["Node Type"];
    if (type === "Seq Scan") found.push(`sequential scan of ${table}`);
    if (type === "Index Scan" || type === "Index Only Scan" || type === "Bitmap Index Scan") {
      const byClinic = /\bclinic_id\b/.test(node["Index Cond"] ?? "");
      const unique = uniqueIndexes.has(node["Index Name"] ?? "");
      // One parent's rows by the parent's id (an invoice's payments, an endpoint's deliveries).
      const ofOneParent = /\b[a-z_]+_id = '[0-9a-f-]{36}'::uuid/.test(node["Index Cond"] ?? "");
      const probed = parent?.["Node Type"] === "Nested Loop" && node["Parent Relationship"] === "Inner";
      const underBitmapOfClinic = type === "Bitmap Index Scan" && parent && /\bclinic_id\b/.test(JSON.stringify(parent["Plans"]?.map((p) => p["Index Cond"])));
      if (!byClinic && !unique && !ofOneParent && !probed && !underBitmapOfClinic) found.push(`${table} through ${node["Index Name"]} (${node["Index Cond"] ?? "no condition"}), not driven by the clinic`);
    }
    if (type !== "Bitmap Index Scan") {
      const loops = node["Actual Loops"] ?? 1;
      const read = ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0)) * loops;
      if (read > ROWS_READ) found.push(`${table}: ${read} rows read for one page (${type}${node["Index Name"] ? ` on ${node["Index Name"]}` : ""})`);
    }
  }
  return found;
}

async function explain(statement: { sql: string; params: unknown[] }): Promise<PlanNode> {
  // One transaction, so the setting holds for the EXPLAIN; read only, so nothing is written twice.
  return t.database.copyTransaction("snapshot", async (session) => {
    await session.query("SET LOCAL enable_seqscan = off");
    const [row] = await session.query<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.sql}`, statement.params);
    const json = Object.values(row!)[0];
    const parsed = (typeof json === "string" ? JSON.parse(json) : json) as { Plan: PlanNode }[];
    return parsed[0]!.Plan;
  });
}

describe(`every list route is planned for its clinic (${databaseKind})`, () => {
  test("the route table lists the lists, with their filters", () => {
    const paths = listRoutes().map((r) => r.path);
    for (const known of ["/api/v1/tutors", "/api/v1/visits", "/api/v1/billing/invoices", "/api/v1/patients/:id/timeline", "/api/v1/vaccinations/due", "/api/v1/audit"]) expect(paths).toContain(known);
    // Delta sync's variant is planned like any filter on the lists that take it.
    for (const synced of ["/api/v1/reminders", "/api/v1/reminder-rules", "/api/v1/users/:id/time-off", "/api/v1/clinic/closures"]) {
      expect(listRoutes().find((r) => r.path === synced)?.query, synced).toContain("updated_since");
    }
    const missing = listRoutes().flatMap((r) => r.query.filter((name) => !SAMPLES[name]).map((name) => `${r.path}?${name}`));
    expect(missing, "add a sample value for these filters").toEqual([]);
  });

  test("each query variant of each list: no sequential scan of a clinic table, every scan driven by the clinic, a page reads a page", async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of listRoutes()) {
      const path = route.path.replace(":id", pathId(route.path));
      const variants = ["", ...route.query.map((name) => `${name}=${encodeURIComponent(SAMPLES[name]!(route.path))}`)];
      for (const variant of variants) {
        const url = variant ? `${path}?${variant}` : path;
        let status = 0;
        let text = "";
        const statements = await capture(async () => {
          const response = await owner.as("GET", url);
          status = response.status;
          text = response.text;
        });
        if (status !== 200) {
          failures.push(`${url}: ${status} ${text.slice(0, 200)}`);
          continue;
        }
        for (const statement of statements) {
          const plan = await explain(statement);
          const found = problems(plan);
          checked++;
          if (found.length) failures.push(`${route.path}${variant ? `?${variant.split("=")[0]}` : ""}: ${found.join("; ")}\n    ${statement.sql.slice(0, 300)}\n    ${outline(plan)}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(failures).toEqual([]);
  }, 300_000);
});
