import { beforeAll, describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import type { Answer, Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { draft, emitted, pay } from "./helpers";
import { useClinicApp } from "../helpers/fixture";
import { useSiiChecks } from "./sii-checks";
import { facturaReceiver, makeIssuer, siiConfig } from "./sii-fixtures";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { config: siiConfig() });
useSiiChecks(() => t);
/** A clinic ready to issue (issuer data, CAFs from folio 1, a certificate). */
const issuerClinic = async () => {
  const clinic = await registerClinic(t);
  await makeIssuer(clinic);
  return clinic;
};

const issue = <Body = Answer<TaxDocumentView>>(who: ClinicSession, json: Record<string, unknown>) => who.as<Body>("POST", "/api/v1/billing/sii/documents", { json });
const documents = async () => (await t.database.query<{ n: number }>("select count(*)::int as n from tax_documents"))[0]!.n;

describe("tax documents", () => {
  beforeAll(() => makeIssuer(owner));

  test("a boleta (39) for an emitted invoice and a factura (33) for a paid one, with folios per type from 1", async () => {
    const clinic = await issuerClinic();
    const a = await emitted(clinic, [{ quantity: 1, unit_price: 10_000 }]);
    const b = await emitted(clinic, [{ quantity: 2, unit_price: 10_000 }]);
    await pay(clinic, b.id, b.total_amount);
    const boleta = await issue(clinic, { doc_type: 39, invoice_id: a.id });
    expect(boleta.status, boleta.text).toBe(201);
    expect(boleta.body).toMatchObject({ doc_type: 39, folio: 1, invoice_id: a.id, net_amount: 10_000, tax_amount: 1_900, total_amount: 11_900, currency: "CLP", receiver_rut: null });
    const factura = await issue(clinic, { doc_type: 33, invoice_id: b.id, ...facturaReceiver, receiver_rut: "76.086.428-5" });
    expect(factura.status, factura.text).toBe(201);
    expect(factura.body).toMatchObject({ doc_type: 33, folio: 1, receiver_rut: "76.086.428-5", total_amount: 23_800 });
    const c = await emitted(clinic, [{ quantity: 1, unit_price: 500 }]);
    expect((await issue(clinic, { doc_type: 39, invoice_id: c.id })).body.folio).toBe(2);
  });

  test("one 33/39 per invoice: a second is 409 and does not consume a folio", async () => {
    const clinic = await issuerClinic();
    const a = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await issue(clinic, { doc_type: 39, invoice_id: a.id })).body.folio).toBe(1);
    const before = await documents();
    for (const json of [{ doc_type: 39, invoice_id: a.id }, { doc_type: 33, invoice_id: a.id, ...facturaReceiver, receiver_rut: "76086428-5", receiver_name: "X" }]) {
      const again = await issue(clinic, json);
      expect(again.status, again.text).toBe(409);
      expect(again.body.code).toBe("CONFLICT");
    }
    expect(await documents()).toBe(before);
    const b = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await issue(clinic, { doc_type: 39, invoice_id: b.id })).body.folio).toBe(2);
  });

  test("a factura needs a RUT with a valid check digit other than 66.666.666-6 (422), and every receiver field the SII marks mandatory (409 naming them); nothing written", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const before = await documents();
    for (const [json, field] of [
      [{ receiver_rut: "76.086.428-4" }, "body.receiver_rut"],
      [{ receiver_rut: "garbage" }, "body.receiver_rut"],
      [{ receiver_rut: "66.666.666-6" }, "body.receiver_rut"],
      [{ receiver_rut: "66666666-6" }, "body.receiver_rut"],
    ] as const) {
      const r = await issue<Refusal<ValidationDetails>>(owner, { doc_type: 33, invoice_id: inv.id, ...facturaReceiver, ...json });
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toContain(field);
    }
    for (const field of ["receiver_rut", "receiver_name", "receiver_giro", "receiver_address", "receiver_commune"] as const) {
      const { [field]: _left, ...rest } = facturaReceiver;
      const r = await issue<Refusal<{ reason: string; missing: string[] }>>(owner, { doc_type: 33, invoice_id: inv.id, ...rest });
      expect(r.status, r.text).toBe(409);
      expect(r.body).toMatchObject({ code: "CONFLICT", details: { reason: "receiver_data_missing", missing: [field] } });
    }
    const bare = await issue<Refusal<{ missing: string[] }>>(owner, { doc_type: 33, invoice_id: inv.id, receiver_rut: "12345678-5", receiver_name: "Juan" });
    expect(bare.body.details.missing).toEqual(["receiver_giro", "receiver_address", "receiver_commune"]);
    expect(await documents()).toBe(before);
    const ok = await issue(owner, { doc_type: 33, invoice_id: inv.id, ...facturaReceiver, receiver_rut: "12345678-5", receiver_name: "Juan" });
    expect(ok.body.receiver_rut, ok.text).toBe("12.345.678-5");
  });

  test("draft and void invoices get no document (409); an unknown doc_type is 422", async () => {
    const d = await draft(owner, [{ quantity: 1, unit_price: 100 }]);
    expect((await issue(owner, { doc_type: 39, invoice_id: d.id })).status).toBe(409);
    await owner.as("POST", `/api/v1/billing/invoices/${d.id}/void`);
    expect((await issue(owner, { doc_type: 39, invoice_id: d.id })).status).toBe(409);
    expect((await issue(owner, { doc_type: 34, invoice_id: d.id })).status).toBe(422);
    expect((await issue(owner, { doc_type: "39", invoice_id: d.id })).status).toBe(422);
  });

  test("a nota de crédito (61) credits an earlier document in full, once", async () => {
    const clinic = await issuerClinic();
    const inv = await emitted(clinic, [{ quantity: 1, unit_price: 5_000 }]);
    const boleta = (await issue(clinic, { doc_type: 39, invoice_id: inv.id })).body;
    const credit = await issue(clinic, { doc_type: 61, referenced_document_id: boleta.id });
    expect(credit.status, credit.text).toBe(201);
    expect(credit.body).toMatchObject({ doc_type: 61, folio: 1, referenced_document_id: boleta.id, invoice_id: inv.id, total_amount: 5_950 });
    expect((await issue(clinic, { doc_type: 61, referenced_document_id: boleta.id })).status).toBe(409);
    expect((await issue(clinic, { doc_type: 61, referenced_document_id: credit.body.id })).status).toBe(422);
    expect((await issue(clinic, { doc_type: 61 })).status).toBe(422);
  });

  test("40 concurrent requests get folios 1..40 exactly once", async () => {
    const clinic = await issuerClinic();
    const invoices = [];
    for (let i = 0; i < 40; i++) invoices.push(await emitted(clinic, [{ quantity: 1, unit_price: 100 + i }]));
    const results = await Promise.all(invoices.map((inv) => issue(clinic, { doc_type: 39, invoice_id: inv.id })));
    expect(results.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(results.map((r) => r.body.folio).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  test("lists filter by doc_type and issue date; another clinic sees none and cannot reference them", async () => {
    const clinic = await issuerClinic();
    const a = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    const boleta = (await issue(clinic, { doc_type: 39, invoice_id: a.id })).body;
    const b = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    const factura = (await issue(clinic, { doc_type: 33, invoice_id: b.id, ...facturaReceiver })).body;
    const list = async (query: string) => (await clinic.as<CursorPageBody<TaxDocumentView>>("GET", `/api/v1/billing/sii/documents?${query}`)).body.data.map((d: { id: string }) => d.id);
    expect(await list("doc_type=39")).toEqual([boleta.id]);
    expect(await list("doc_type=33,39")).toEqual([boleta.id, factura.id]);
    expect(await list("date_from=2026-01-15&date_to=2026-01-15")).toHaveLength(2);
    expect(await list("date_from=2026-01-16")).toEqual([]);
    expect((await clinic.as("GET", "/api/v1/billing/sii/documents?doc_type=40")).status).toBe(422);
    const other = await registerClinic(t);
    expect((await other.as<CursorPageBody<TaxDocumentView>>("GET", "/api/v1/billing/sii/documents")).body.data).toEqual([]);
    expect((await issue(other, { doc_type: 61, referenced_document_id: boleta.id })).status).toBe(422);
    expect((await issue(other, { doc_type: 39, invoice_id: a.id })).status).toBe(422);
  });
});
