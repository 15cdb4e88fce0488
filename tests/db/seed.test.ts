import { afterAll, beforeAll, expect, test } from "bun:test";
import { demoBlock, seedDemo, type DemoResult } from "../../src/cli/seed";
import { formatRut } from "../../src/lib/rut";
import type { SessionView } from "../../src/modules/auth/model";
import type { ClinicContextResult } from "../../src/modules/mcp/tools/clinic-context";
import { createTestApp, type TestApp } from "../helpers/app";
import { demoLogins } from "../helpers/demo-block";

let t: TestApp;
let demo: DemoResult;
beforeAll(async () => {
  t = await createTestApp();
  demo = await seedDemo(t.database, t.clock, "small");
});
afterAll(() => t.close());

const rows = <T>(text: string, params: unknown[] = [demo.clinic_id]) => t.database.query<T>(text, params);

test("the printed owner login and MCP key work", async () => {
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: demo.owner });
  expect(login.status, login.text).toBe(200);
  expect(login.body.clinic.name).toBe("Clínica Veterinaria Los Aromos");
  const figures = await t.request<ClinicContextResult>("POST", "/mcp/tools/get_clinic_context/invoke", { token: demo.mcp_key, json: {} });
  expect(figures.status, figures.text).toBe(200);
  expect(figures.body.clinic_id).toBe(demo.clinic_id);
  expect(figures.body.active_alerts).toBeGreaterThan(0);
});

test("money adds up: items → net, 19 % tax rounded half-up, total, paid amounts", async () => {
  const bad = await rows<{ id: string }>(`
    select i.id from invoices i
    where i.clinic_id = $1 and (
      i.net_amount <> (select sum(total_amount) from invoice_items where invoice_id = i.id)
      or i.tax_amount <> floor((i.net_amount * 1900 + 5000) / 10000)
      or i.total_amount <> i.net_amount + i.tax_amount
      or i.paid_amount <> coalesce((select sum(amount - refunded_amount) from payments where invoice_id = i.id), 0)
      or (i.status = 'paid') <> (i.paid_amount = i.total_amount))`);
  expect(bad).toEqual([]);
  expect(demo.counts.refunds).toBeGreaterThan(0);
});

test("SII folios run from 1 without gaps per document type; RUTs carry valid check digits", async () => {
  const folios = await rows<{ doc_type: number; n: number; max: number }>("select doc_type, count(*)::int as n, max(folio) as max from tax_documents where clinic_id = $1 group by doc_type");
  expect(folios.length).toBeGreaterThanOrEqual(2);
  for (const f of folios) expect(f.max, `doc ${f.doc_type}`).toBe(f.n);
  const ruts = await rows<{ national_id: string }>("select national_id from tutors where clinic_id = $1");
  for (const { national_id } of ruts) {
    const body = Number(national_id.split("-")[0]!.replaceAll(".", ""));
    expect(formatRut(body)).toBe(national_id);
  }
  expect(formatRut(12_345_678)).toBe("12.345.678-5");
  expect(formatRut(11_111_111)).toBe("11.111.111-1");
});

test("every demo login works with its own password, and the clinic carries a plausible issuer", async () => {
  expect(demo.action).toBe("created");
  expect(demo.logins.map((login) => login.role)).toEqual(["owner", "vet", "vet", "staff"]);
  expect(new Set(demo.logins.map((login) => login.password)).size).toBe(4);
  for (const login of demo.logins) {
    const r = await t.request("POST", "/api/v1/auth/login", { json: { email: login.email, password: login.password } });
    expect(r.status, `${login.email}: ${r.text}`).toBe(200);
  }
  const clinic = (await t.request<SessionView>("POST", "/api/v1/auth/login", { json: demo.owner })).body.clinic;
  expect(clinic).toMatchObject({ legal_name: "Servicios Veterinarios Los Aromos SpA", rut: "76.086.428-5", giro: "Servicios veterinarios" });
  const block = demoBlock(demo, "http://localhost:3000");
  expect(demoLogins(block)).toEqual(demo.logins.map(({ role, email, password, name }) => ({ role, email, password, name })));
  expect(block).toContain(demo.mcp_key);
});

test("a clinic day: visits inside the opening hours, notes and prescriptions that fit the visit, an address without repeated parts", async () => {
  // 09:00–19:00 on weekdays, 10:00–14:00 on Saturdays, closed on Sundays, in the clinic's time zone.
  const outside = await rows<{ at: string }>(`
    select to_char(scheduled_at at time zone 'America/Santiago', 'Dy HH24:MI') as at from visits
    where clinic_id = $1 and not (
      (extract(isodow from scheduled_at at time zone 'America/Santiago') between 1 and 5
        and (scheduled_at at time zone 'America/Santiago')::time >= '09:00' and (scheduled_at at time zone 'America/Santiago')::time < '19:00')
      or (extract(isodow from scheduled_at at time zone 'America/Santiago') = 6
        and (scheduled_at at time zone 'America/Santiago')::time >= '10:00' and (scheduled_at at time zone 'America/Santiago')::time < '14:00'))`);
  expect(outside).toEqual([]);
  const expected: Record<string, string> = {
    "Control anual": "control sano", "Vacunación": "control sano", "Vómitos": "gastroenteritis", "Cojera": "esguince leve", "Control de peso": "sobrepeso",
    "Dermatitis": "dermatitis alérgica", "Otitis": "otitis externa", "Control post operatorio": "control post operatorio",
  };
  const pairs = await rows<{ reason: string; diagnosis: string }>("select distinct v.reason, n.diagnoses[1] as diagnosis from clinical_notes n join visits v on v.id = n.visit_id where n.clinic_id = $1");
  expect(pairs.length).toBeGreaterThan(3);
  for (const pair of pairs) expect(pair.diagnosis, pair.reason).toBe(expected[pair.reason]!);
  const drugs = await rows<{ reason: string; drug: string }>("select distinct v.reason, p.drug from prescriptions p join visits v on v.id = p.visit_id where p.clinic_id = $1");
  expect(drugs.length).toBeGreaterThan(0);
  for (const { reason } of drugs) expect(["Vómitos", "Cojera", "Dermatitis", "Otitis", "Control post operatorio"]).toContain(reason);
  const [clinic] = await rows<{ address: string; commune: string }>("select address, commune from clinics where id = $1");
  expect(clinic!.address).not.toContain(clinic!.commune);
});

test("a second run reuses the demo clinic (no second clinic): new passwords and key, the old ones stop working", async () => {
  const [before] = await t.database.query<{ n: number }>("select count(*)::int as n from clinics");
  const again = await seedDemo(t.database, t.clock, "small");
  expect(again.action).toBe("reused");
  expect(again.clinic_id).toBe(demo.clinic_id);
  expect((await t.database.query<{ n: number }>("select count(*)::int as n from clinics"))[0]).toEqual(before!);
  expect((await t.request("POST", "/api/v1/auth/login", { json: demo.owner })).status).toBe(401);
  expect((await t.request("POST", "/api/v1/auth/login", { json: again.owner })).status).toBe(200);
  const figures = await t.request("POST", "/mcp/tools/get_clinic_context/invoke", { token: again.mcp_key, json: {} });
  expect(figures.status, figures.text).toBe(200);
  expect(again.counts).toEqual(demo.counts);
  demo = again;
});

test("--size large adds visits generated inside the database, with unique time-ordered ids", async () => {
  const large = await seedDemo(t.database, t.clock, "large", { replace: true, largeVisitCount: 2_500 });
  expect(large.counts.visits).toBe(420 + 2_500);
  const [row] = await t.database.query<{ n: number; ids: number }>("select count(*)::int as n, count(distinct id)::int as ids from visits where clinic_id = $1", [large.clinic_id]);
  expect(row).toEqual({ n: 2_920, ids: 2_920 });
  // --replace deleted the earlier demo clinic entirely.
  expect(large.action).toBe("replaced");
  expect(large.clinic_id).not.toBe(demo.clinic_id);
  const [left] = await t.database.query<{ n: number }>("select (select count(*) from clinics where id = $1) + (select count(*) from invoices where clinic_id = $1) + (select count(*) from users where clinic_id = $1) as n", [demo.clinic_id]);
  expect(Number(left!.n)).toBe(0);
});
