/**
 * The starter reports on the demo clinic: each answers exactly what the same question computes
 * here from the base tables, in the clinic's time zone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { seedDemo, type DemoResult } from "../../src/cli/seed";
import type { CursorPageBody } from "../../src/http/pagination";
import type { SessionView } from "../../src/modules/auth/model";
import type { ReportTemplate, ReportView } from "../../src/modules/mcp-reports/model";
import { createTestApp, type TestApp } from "../helpers/app";
import { invoke, type QueryResult, type ToolList } from "./helpers";

let t: TestApp;
let demo: DemoResult;
const TODAY = "2026-01-15"; // the test clock's day
beforeAll(async () => {
  t = await createTestApp();
  demo = await seedDemo(t.database, t.clock, "small");
});
afterAll(() => t.close());

const santiagoDay = (at: Date | string) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/Santiago" }).format(new Date(at));
const addDays = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
const rows = <T>(sql: string) => t.database.query<T>(sql, [demo.clinic_id]);

async function run(tool: string, input: Record<string, unknown>) {
  const r = await invoke<QueryResult>(t, demo.mcp_key, tool, input);
  expect(r.status, r.text).toBe(200);
  expect(r.body.truncated).toBe(false);
  return r.body.rows;
}

test("the demo clinic has the seven starter reports, the same as GET /mcp/reports/templates offers", async () => {
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: demo.owner });
  const token = login.body.access_token;
  const templates = await t.request<{ templates: ReportTemplate[] }>("GET", "/api/v1/mcp/reports/templates", { token });
  const saved = await t.request<CursorPageBody<ReportView>>("GET", "/api/v1/mcp/reports", { token });
  const names = ["daily_revenue", "median_ticket_by_species", "overdue_invoices", "vaccines_due", "weight_trend", "patients_without_recent_visit", "no_show_rate_by_vet"];
  expect(templates.body.templates.map((r: { name: string }) => r.name)).toEqual(names);
  expect(saved.body.data.map((r: { name: string }) => r.name).sort()).toEqual([...names].sort());
  for (const template of templates.body.templates) {
    expect(template.sql, template.name).not.toContain("UTC");
    const stored = saved.body.data.find((r: { name: string }) => r.name === template.name);
    expect(stored!.sql).toBe(template.sql);
  }
  const tools = await t.request<ToolList>("GET", "/mcp/tools", { token: demo.mcp_key });
  expect(tools.body.tools.map((tool: { name: string }) => tool.name)).toEqual(expect.arrayContaining(names.map((name) => `report_${name}`)));
});

test("daily_revenue: payments minus refunds per clinic day", async () => {
  const from = addDays(TODAY, -30);
  const expected = new Map<string, number>();
  for (const p of await rows<{ paid_at: Date; amount: number }>("select paid_at, amount from payments where clinic_id = $1")) {
    const day = santiagoDay(p.paid_at);
    expected.set(day, (expected.get(day) ?? 0) + Number(p.amount));
  }
  for (const r of await rows<{ refunded_at: Date; amount: number }>("select refunded_at, amount from refunds where clinic_id = $1")) {
    const day = santiagoDay(r.refunded_at);
    expected.set(day, (expected.get(day) ?? 0) - Number(r.amount));
  }
  const wanted = [...expected].filter(([day]) => day >= from && day <= TODAY).sort(([a], [b]) => a.localeCompare(b)).map(([day, revenue]) => ({ day, revenue }));
  expect(wanted.length).toBeGreaterThan(10);
  expect(await run("report_daily_revenue", { from, to: TODAY })).toEqual(wanted);
});

test("median_ticket_by_species: the median total of emitted and paid invoices per species", async () => {
  const invoices = await rows<{ species: string; total: number }>(
    "select p.species, i.total_amount as total from invoices i join visits v on v.id = i.visit_id join patients p on p.id = v.patient_id where i.clinic_id = $1 and i.status in ('emitted', 'paid')",
  );
  const bySpecies = new Map<string, number[]>();
  for (const invoice of invoices) bySpecies.set(invoice.species, [...(bySpecies.get(invoice.species) ?? []), Number(invoice.total)]);
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length / 2;
    return Number.isInteger(middle) ? Math.round((sorted[middle - 1]! + sorted[middle]!) / 2) : sorted[Math.floor(middle)]!;
  };
  const wanted = [...bySpecies].sort(([a], [b]) => a.localeCompare(b)).map(([species, totals]) => ({ species, invoices: totals.length, median_ticket: median(totals) }));
  expect(wanted.length).toBeGreaterThanOrEqual(3);
  expect(await run("report_median_ticket_by_species", {})).toEqual(wanted);
});

test("overdue_invoices: emitted invoices with a balance, at least N days old", async () => {
  const open = await rows<{ id: string; tutor: string; phone: string; emitted_at: Date; total: number; paid: number }>(
    "select i.id, t.name as tutor, t.phone, i.emitted_at, i.total_amount as total, i.paid_amount as paid from invoices i join tutors t on t.id = i.tutor_id where i.clinic_id = $1 and i.status = 'emitted' and i.paid_amount < i.total_amount order by i.emitted_at, i.id",
  );
  const days = 20;
  const wanted = open
    .filter((invoice) => santiagoDay(invoice.emitted_at) <= addDays(TODAY, -days))
    .map((invoice) => {
      const emittedOn = santiagoDay(invoice.emitted_at);
      return {
        invoice_id: invoice.id, tutor: invoice.tutor, phone: invoice.phone, emitted_on: emittedOn, total_amount: Number(invoice.total),
        balance: Number(invoice.total) - Number(invoice.paid), days_outstanding: (Date.parse(TODAY) - Date.parse(emittedOn)) / 86_400_000,
      };
    });
  expect(wanted.length).toBeGreaterThan(0);
  expect(await run("report_overdue_invoices", { days, as_of: TODAY })).toEqual(wanted);
});

test("vaccines_due: open due dates through the next N days, overdue ones included and flagged", async () => {
  const open = await rows<{ due_date: string; patient: string; species: string; tutor: string; phone: string; vaccine: string; reminder_status: string; id: string }>(
    "select v.next_due_on::text as due_date, p.name as patient, p.species, t.name as tutor, t.phone, v.vaccine, v.reminder_status, v.id from vaccinations v join patients p on p.id = v.patient_id join tutors t on t.id = p.tutor_id where v.clinic_id = $1 and v.deleted_at is null and p.deleted_at is null and v.due_closed_at is null and v.next_due_on is not null",
  );
  const days = 20;
  const wanted = open
    .filter((due) => due.due_date <= addDays(TODAY, days))
    .sort((a, b) => a.due_date.localeCompare(b.due_date) || (a.patient < b.patient ? -1 : a.patient > b.patient ? 1 : 0) || a.id.localeCompare(b.id))
    .map(({ id: _id, due_date, ...due }) => ({ due_date, overdue: due_date < TODAY, ...due }));
  expect(wanted.filter((due) => due.overdue).length).toBeGreaterThan(0);
  expect(wanted.filter((due) => !due.overdue).length).toBeGreaterThan(0);
  expect(await run("report_vaccines_due", { days, as_of: TODAY })).toEqual(wanted);
});

test("weight_trend: one patient's weighings in order with the change from the one before", async () => {
  const [patient] = await rows<{ id: string }>("select patient_id as id from vitals where clinic_id = $1 and weight_grams is not null group by patient_id order by count(*) desc, patient_id limit 1");
  const weighings = await t.database.query<{ measured_at: Date; weight_grams: number }>("select measured_at, weight_grams from vitals where patient_id = $1 and weight_grams is not null order by measured_at, id", [patient!.id]);
  expect(weighings.length).toBeGreaterThan(2);
  const wanted = weighings.map((w, i) => ({ day: santiagoDay(w.measured_at), weight_grams: w.weight_grams, change_grams: i === 0 ? null : w.weight_grams - weighings[i - 1]!.weight_grams }));
  expect(await run("report_weight_trend", { patient_id: patient!.id })).toEqual(wanted);
});

test("patients_without_recent_visit: no completed visit in the last N months, never-seen ones first", async () => {
  const patients = await rows<{ id: string; name: string; species: string; tutor: string; phone: string }>("select p.id, p.name, p.species, t.name as tutor, t.phone from patients p join tutors t on t.id = p.tutor_id where p.clinic_id = $1 and p.deleted_at is null");
  const visits = await rows<{ patient_id: string; completed_at: Date }>("select patient_id, completed_at from visits where clinic_id = $1 and deleted_at is null and status = 'completed'");
  const months = 1;
  const cutoff = addDays(TODAY, -31); // one month before 2026-01-15
  const last = new Map<string, string>();
  for (const v of visits) {
    const day = santiagoDay(v.completed_at);
    if (!last.has(v.patient_id) || last.get(v.patient_id)! < day) last.set(v.patient_id, day);
  }
  const wanted = patients
    .filter((p) => !last.has(p.id) || last.get(p.id)! < cutoff)
    .map((p) => ({ patient_id: p.id, patient: p.name, species: p.species, tutor: p.tutor, phone: p.phone, last_visit_on: last.get(p.id) ?? null }))
    .sort((a, b) => (a.last_visit_on === b.last_visit_on ? 0 : a.last_visit_on === null ? -1 : b.last_visit_on === null ? 1 : a.last_visit_on.localeCompare(b.last_visit_on)) || (a.patient < b.patient ? -1 : a.patient > b.patient ? 1 : 0) || a.patient_id.localeCompare(b.patient_id));
  expect(wanted.length).toBeGreaterThan(0);
  expect(await run("report_patients_without_recent_visit", { months, as_of: TODAY })).toEqual(wanted);
});

test("no_show_rate_by_vet: no-shows among visits that were due, per vet", async () => {
  const visits = await rows<{ vet_id: string; status: string }>("select vet_id, status from visits where clinic_id = $1 and status in ('completed', 'no_show')");
  const byVet = new Map<string, { visits: number; no_shows: number }>();
  for (const visit of visits) {
    const entry = byVet.get(visit.vet_id) ?? { visits: 0, no_shows: 0 };
    entry.visits++;
    if (visit.status === "no_show") entry.no_shows++;
    byVet.set(visit.vet_id, entry);
  }
  const wanted = [...byVet]
    .map(([vet_id, entry]) => ({ vet_id, ...entry, no_show_pct: Math.round((1000 * entry.no_shows) / entry.visits) / 10 }))
    .sort((a, b) => b.no_show_pct - a.no_show_pct || a.vet_id.localeCompare(b.vet_id));
  expect(wanted).toHaveLength(2);
  expect(await run("report_no_show_rate_by_vet", {})).toEqual(wanted);
});
