/** A nota de crédito (61) cancels its sale: payments must be refunded first (a refund issues it); the invoice becomes `credited`. */
import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import type { ClinicContextResult } from "../../src/modules/mcp/tools/clinic-context";
import type { Answer, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { createKey, invoke, type QueryResult } from "../mcp/helpers";
import { emitted, pay, tutorFor } from "./helpers";
import { useClinicApp } from "../helpers/fixture";
import { useSiiChecks } from "./sii-checks";
import { makeIssuer } from "./sii-fixtures";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { clinic: { timezone: "America/Santiago" } });
useSiiChecks(() => t);

const issue = (json: unknown) => owner.as<Answer<TaxDocumentView>>("POST", "/api/v1/billing/sii/documents", { json });

test("credit a paid boleta end to end: refused while money is held; the full refund issues the nota de crédito, the invoice is credited and leaves the revenue figures", async () => {
  await makeIssuer(owner, [39, 61]);
  const key = await createKey(owner, { scopes: ["clinic_context", "query"] });
  const before = (await invoke<ClinicContextResult>(t, key.api_key, "get_clinic_context")).body;
  const tutorId = await tutorFor(owner, "Credited Tutor");
  const invoice = await emitted(owner, [{ quantity: 1, unit_price: 10_000 }], tutorId);
  const payment = await pay(owner, invoice.id, 11_900);
  expect(payment.status, payment.text).toBe(201);
  const boleta = await issue({ doc_type: 39, invoice_id: invoice.id });
  expect(boleta.status, boleta.text).toBe(201);

  const refused = await issue({ doc_type: 61, referenced_document_id: boleta.body.id });
  expect(refused.status, refused.text).toBe(409);
  expect(refused.body.details).toEqual({ invoice_id: invoice.id, refund_needed: 11_900 });

  const refund = await owner.as<{ credit_note_id: string }>("POST", "/api/v1/billing/refunds", { json: { payment_id: payment.body.id, amount: 11_900, reason: "Venta anulada" } });
  expect(refund.status, refund.text).toBe(201);
  const note = await owner.as<TaxDocumentView>("GET", `/api/v1/billing/sii/documents/${refund.body.credit_note_id}`);
  expect(note.status, note.text).toBe(200);
  expect(note.body).toMatchObject({ doc_type: 61, reference_code: 1, referenced_document_id: boleta.body.id, total_amount: 11_900, invoice_id: invoice.id });
  // The document is credited in full: a second nota de crédito would exceed it.
  expect((await issue({ doc_type: 61, referenced_document_id: boleta.body.id })).status).toBe(409);

  const credited = await owner.as("GET", `/api/v1/billing/invoices/${invoice.id}`);
  expect(credited.body).toMatchObject({ status: "credited", paid_amount: 0, credited_amount: 11_900, balance: 0 });
  expect((await owner.as<CursorPageBody<InvoiceView>>("GET", "/api/v1/billing/invoices?status=credited")).body.data.map((i: { id: string }) => i.id)).toContain(invoice.id);
  // Nothing more happens to a credited invoice: no payment, no void, no second document.
  expect((await pay(owner, invoice.id, 100)).status).toBe(409);
  expect((await owner.as("POST", `/api/v1/billing/invoices/${invoice.id}/void`)).status).toBe(409);
  expect((await issue({ doc_type: 39, invoice_id: invoice.id })).status).toBe(409);

  // Revenue: the payment and its refund cancel out; the average ticket leaves the credited invoice out.
  const after = (await invoke<ClinicContextResult>(t, key.api_key, "get_clinic_context")).body;
  expect(after.revenue_today).toBe(before.revenue_today);
  expect(after.avg_ticket).toBe(before.avg_ticket);
  const view = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: `select status from invoices where id = '${invoice.id}'` });
  expect(view.body.rows).toEqual([{ status: "credited" }]);

  // A tutor whose only invoice is credited can be deleted.
  expect((await owner.as("DELETE", `/api/v1/tutors/${tutorId}`)).status).toBe(204);
});
