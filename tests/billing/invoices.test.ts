import { describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { ErrorBody, Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
import { draft, emitted, pay, tutorFor } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

const count = (table: string) => t.count(table);
const invoice = (id: string) => owner.as<InvoiceView>("GET", `/api/v1/billing/invoices/${id}`);

describe("invoice life cycle with exact money", () => {
  test("draft: item totals, net, 19 % tax rounded half-up once, total, balance", async () => {
    const created = await draft(owner, [
      { description: "Consulta", quantity: 2, unit_price: 10_000 },
      { description: "Vacuna", quantity: 1, unit_price: 5_990 },
    ]);
    expect(created).toMatchObject({ status: "draft", currency: "CLP", net_amount: 25_990, tax_amount: 4_938, total_amount: 30_928, paid_amount: 0, balance: 30_928, emitted_at: null });
    expect(created.items?.map((i) => i.total_amount)).toEqual([20_000, 5_990]);
    expect((await invoice(created.id)).body).toEqual(created);
  });

  test.each([
    [50, 10, 60], // 9.5 → 10
    [150, 29, 179], // 28.5 → 29
    [1, 0, 1], // 0.19 → 0
    [3, 1, 4], // 0.57 → 1
    [10, 2, 12], // 1.9 → 2
  ])("net %d → tax %d, total %d", async (net, tax, total) => {
    const created = await draft(owner, [{ quantity: 1, unit_price: net }]);
    expect(created, JSON.stringify(created)).toMatchObject({ net_amount: net, tax_amount: tax, total_amount: total });
  });

  test("tax is rounded once per invoice, not per line", async () => {
    // Three lines of 50: per-line rounding would give 3 × 10 = 30; once per invoice, 150 → 28.5 → 29.
    const created = await draft(owner, [{ quantity: 1, unit_price: 50 }, { quantity: 1, unit_price: 50 }, { quantity: 1, unit_price: 50 }]);
    expect(created.tax_amount).toBe(29);
  });

  test("drafts are editable; items replace and totals follow; emitted ones are not (409, unchanged)", async () => {
    const created = await draft(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const edited = await owner.as<InvoiceView>("PATCH", `/api/v1/billing/invoices/${created.id}`, { json: { items: [{ description: "Cirugía", quantity: 3, unit_price: 20_000 }], notes: "Con anestesia" } });
    expect(edited.body, edited.text).toMatchObject({ net_amount: 60_000, tax_amount: 11_400, total_amount: 71_400, notes: "Con anestesia" });
    expect(edited.body.items).toHaveLength(1);
    const emit = await owner.as("POST", `/api/v1/billing/invoices/${created.id}/emit`);
    expect(emit.body, emit.text).toMatchObject({ status: "emitted", emitted_at: t.clock.now().toISOString().replace(".000Z", "Z") });
    const before = (await invoice(created.id)).body;
    const refused = await owner.as<ErrorBody>("PATCH", `/api/v1/billing/invoices/${created.id}`, { json: { notes: "late" } });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body.code).toBe("INVALID_STATE_TRANSITION");
    expect((await invoice(created.id)).body).toEqual(before);
    const again = await owner.as("POST", `/api/v1/billing/invoices/${created.id}/emit`);
    expect(again.status, again.text).toBe(409);
  });
});

describe("void rules", () => {
  test("a draft and an emitted invoice without payments can be voided", async () => {
    for (const make of [() => draft(owner, [{ quantity: 1, unit_price: 100 }]), () => emitted(owner, [{ quantity: 1, unit_price: 100 }])]) {
      const inv = await make();
      const r = await owner.as<InvoiceView>("POST", `/api/v1/billing/invoices/${inv.id}/void`);
      expect(r.body, r.text).toMatchObject({ status: "void" });
      expect(r.body.voided_at).toBeString();
      const twice = await owner.as("POST", `/api/v1/billing/invoices/${inv.id}/void`);
      expect(twice.status, twice.text).toBe(409);
    }
  });

  test("an invoice with payments (even refunded, or paid) cannot be voided", async () => {
    const partly = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await pay(owner, partly.id, 500)).status).toBe(201);
    const paid = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await pay(owner, paid.id, 1_190)).status).toBe(201);
    for (const id of [partly.id, paid.id]) {
      const before = (await invoice(id)).body;
      const r = await owner.as("POST", `/api/v1/billing/invoices/${id}/void`);
      expect(r.status, r.text).toBe(409);
      expect((await invoice(id)).body).toEqual(before);
    }
  });
});

describe("validation writes nothing", () => {
  test.each([
    ["a float unit price", { items: [{ description: "x", quantity: 1, unit_price: 10.5 }] }, "body.items.0.unit_price"],
    ["a string unit price", { items: [{ description: "x", quantity: 1, unit_price: "100" }] }, "body.items.0.unit_price"],
    ["a negative unit price", { items: [{ description: "x", quantity: 1, unit_price: -1 }] }, "body.items.0.unit_price"],
    ["a zero quantity", { items: [{ description: "x", quantity: 0, unit_price: 1 }] }, "body.items.0.quantity"],
    ["no items", { items: [] }, "body.items"],
    ["a missing description", { items: [{ quantity: 1, unit_price: 1 }] }, "body.items.0.description"],
  ])("%s is 422", async (_label, extra, field) => {
    const [invoices, items] = [await count("invoices"), await count("invoice_items")];
    const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/billing/invoices", { json: { tutor_id: await tutorFor(owner), ...extra } });
    expect(r.status, r.text).toBe(422);
    expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(field);
    expect([await count("invoices"), await count("invoice_items")]).toEqual([invoices, items]);
  });

  test("another clinic's tutor or visit is a 422, and nothing is written", async () => {
    const other = await registerClinic(t);
    const foreignTutor = await tutorFor(other, "Not yours");
    const before = await count("invoices");
    const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/billing/invoices", { json: { tutor_id: foreignTutor, items: [{ description: "x", quantity: 1, unit_price: 1 }] } });
    expect(r.status, r.text).toBe(422);
    expect(r.body.details.fields[0]!.path).toBe("body.tutor_id");
    expect(r.text).not.toContain("Not yours");
    expect(await count("invoices")).toBe(before);
  });
});

describe("lists", () => {
  test("filters: status (multi), tutor_id, date_from/date_to on emitted_at; another clinic sees none", async () => {
    t.clock.set("2026-01-20T12:00:00Z");
    let clinic = await registerClinic(t, { timezone: "America/Santiago" });
    const tutor = await tutorFor(clinic);
    const a = await emitted(clinic, [{ quantity: 1, unit_price: 100 }], tutor);
    t.clock.set("2026-01-21T02:00:00Z"); // still the 20th in Santiago
    clinic = await relogin(t, clinic);
    owner = await relogin(t, owner);
    const b = await emitted(clinic, [{ quantity: 1, unit_price: 100 }]);
    const c = await draft(clinic, [{ quantity: 1, unit_price: 100 }], tutor);
    const ids = async (query: string) => {
      const r = await clinic.as<CursorPageBody<InvoiceView>>("GET", `/api/v1/billing/invoices?${query}`);
      expect(r.status, r.text).toBe(200);
      return r.body.data.map((row: { id: string }) => row.id).sort();
    };
    expect(await ids("status=emitted")).toEqual([a.id, b.id].sort());
    expect(await ids("status=emitted,draft")).toEqual([a.id, b.id, c.id].sort());
    expect(await ids(`tutor_id=${tutor}`)).toEqual([a.id, c.id].sort());
    expect(await ids("date_from=2026-01-20&date_to=2026-01-20")).toEqual([a.id, b.id].sort());
    expect(await ids("date_from=2026-01-21")).toEqual([]);
    expect((await clinic.as("GET", "/api/v1/billing/invoices?status=open")).status).toBe(422);
    expect((await owner.as("GET", "/api/v1/billing/invoices?limit=200")).text).not.toContain(a.id);
  });
});
