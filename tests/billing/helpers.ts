import { expect } from "bun:test";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { PaymentView } from "../../src/modules/billing/payments/model";
import type { TutorView } from "../../src/modules/tutors/model";
import type { Answer } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";

export const tutorFor = async (owner: ClinicSession, name = "Tutor") => {
  const r = await owner.as<TutorView>("POST", "/api/v1/tutors", { json: { name } });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};

export const draft = async (owner: ClinicSession, items: { description?: string; quantity: number; unit_price: number }[], tutorId?: string) => {
  const r = await owner.as<InvoiceView>("POST", "/api/v1/billing/invoices", {
    json: { tutor_id: tutorId ?? (await tutorFor(owner)), items: items.map((i) => ({ description: "Servicio", ...i })) },
  });
  expect(r.status, r.text).toBe(201);
  return r.body;
};

export const emitted = async (owner: ClinicSession, items: { quantity: number; unit_price: number }[], tutorId?: string) => {
  const invoice = await draft(owner, items, tutorId);
  const r = await owner.as<InvoiceView>("POST", `/api/v1/billing/invoices/${invoice.id}/emit`);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

export const pay = <Body = Answer<PaymentView>>(owner: ClinicSession, invoiceId: string, amount: unknown, headers: Record<string, string> = {}) =>
  owner.as<Body>("POST", "/api/v1/billing/payments", { json: { invoice_id: invoiceId, amount, method: "card" }, headers });

