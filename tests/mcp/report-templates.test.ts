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

test("the demo clinic has the five starter reports, the same as GET /mcp/reports/templates offers", async () => {
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: demo.owner });
  const token = login.body.access_token;
  const templates = await t.request<{ templates: ReportTemplate[] }>("GET", "/api/v1/mcp/reports/templates", { token });
  const saved = await t.request<CursorPageBody<ReportView>>("GET", "/api/v1/mcp/reports", { token });
  const names = ["daily_revenue", "median_ticket_by_species", "overdue_invoices", "vaccines_due", "no_show_rate_by_vet"];
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

test("vaccines_due: active vaccine reminders from the day through the next N days", async () => {
  const alerts = await rows<{ due_date: string; patient: string; species: string; tutor: string; phone: string; message: string; id: string }>(
    "select a.due_date::text as due_date, p.name as patient, p.species, t.name as tutor, t.phone, a.message, a.id from alerts a join patients p on p.id = a.patient_id join tutors t on t.id = p.tutor_id where a.clinic_id = $1 and a.kind = 'vaccine_due' and a.status = 'active'",
  );
  const days = 20;
  const wanted = alerts
    .filter((alert) => alert.due_date >= TODAY && alert.due_date <= addDays(TODAY, days))
    .sort((a, b) => a.due_date.localeCompare(b.due_date) || (a.patient < b.patient ? -1 : a.patient > b.patient ? 1 : 0) || a.id.localeCompare(b.id))
    .map(({ id: _id, ...alert }) => alert);
  expect(wanted.length).toBeGreaterThan(0);
  expect(await run("report_vaccines_due", { days, as_of: TODAY })).toEqual(wanted);
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
