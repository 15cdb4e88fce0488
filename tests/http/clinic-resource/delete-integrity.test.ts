/** Deleting a tutor or patient with open work is 409 naming what blocks it; history stays; the board never shows deleted records. */
import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../../src/http/pagination";
import type { AlertView } from "../../../src/modules/alerts/model";
import type { InvoiceView } from "../../../src/modules/billing/invoices/model";
import type { BoardVisitView } from "../../../src/modules/operations/model";
import type { Refusal } from "../../helpers/app";
import type { ClinicSession } from "../../helpers/clinic";
import { draft, emitted, pay } from "../../billing/helpers";
import { useClinicApp } from "../../helpers/fixture";

let owner: ClinicSession;
useClinicApp((made) => ({ owner } = made), { clinic: { timezone: "America/Santiago" } });

/** A 409 that names, per kind, the records that block a delete. */
type Blocked = Refusal<{ blocked_by: Record<string, number> }>;

const create = async (path: string, json: unknown) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body;
};

test("a tutor with live patients or unpaid invoices: 409 with counts per kind; deletable once they are gone", async () => {
  const tutor = await create("/tutors", { name: "Blocked Tutor" });
  const patient = await create("/patients", { tutor_id: tutor.id, name: "Pet", species: "dog" });
  const invoice = await emitted(owner, [{ quantity: 1, unit_price: 1000 }], tutor.id);
  await draft(owner, [{ quantity: 1, unit_price: 10 }], tutor.id);
  const refused = await owner.as<Blocked>("DELETE", `/api/v1/tutors/${tutor.id}`);
  expect(refused.status, refused.text).toBe(409);
  expect(refused.body.details.blocked_by).toEqual({ live_patients: 1, unpaid_invoices: 2 });
  expect((await owner.as("GET", `/api/v1/tutors/${tutor.id}`)).status).toBe(200);

  expect((await owner.as("DELETE", `/api/v1/patients/${patient.id}`)).status).toBe(204);
  expect((await pay(owner, invoice.id, 1190)).status).toBe(201);
  const stillDraft = await owner.as<Blocked>("DELETE", `/api/v1/tutors/${tutor.id}`);
  expect(stillDraft.body.details.blocked_by).toEqual({ unpaid_invoices: 1 });
  const drafts = await owner.as<CursorPageBody<InvoiceView>>("GET", `/api/v1/billing/invoices?tutor_id=${tutor.id}&status=draft`);
  expect((await owner.as("POST", `/api/v1/billing/invoices/${drafts.body.data[0]!.id}/void`)).status).toBe(200);
  expect((await owner.as("DELETE", `/api/v1/tutors/${tutor.id}`)).status).toBe(204);
  // History stays: the paid invoice is still listed, pointing at the deleted tutor.
  const paid = await owner.as("GET", `/api/v1/billing/invoices/${invoice.id}`);
  expect(paid.body).toMatchObject({ status: "paid", tutor_id: tutor.id });
});

test("a patient with scheduled or in-progress visits, or active alerts: 409; the board never shows a deleted patient or tutor", async () => {
  const tutor = await create("/tutors", { name: "Board Tutor" });
  const patient = await create("/patients", { tutor_id: tutor.id, name: "Board Pet", species: "cat" });
  const visit = await create("/visits", { patient_id: patient.id, scheduled_at: "2026-01-15T13:00:00Z" });
  await create("/alerts", { patient_id: patient.id, kind: "vaccine_due", message: "Rabia" });
  const refused = await owner.as<Blocked>("DELETE", `/api/v1/patients/${patient.id}`);
  expect(refused.status, refused.text).toBe(409);
  expect(refused.body.details.blocked_by).toEqual({ open_visits: 1, active_alerts: 1 });

  expect((await owner.as("PATCH", `/api/v1/visits/${visit.id}`, { json: { status: "in_progress" } })).status).toBe(200);
  expect((await owner.as("PATCH", `/api/v1/visits/${visit.id}`, { json: { status: "completed" } })).status).toBe(200);
  const alerts = await owner.as<CursorPageBody<AlertView>>("GET", `/api/v1/alerts?patient_id=${patient.id}`);
  expect((await owner.as("PATCH", `/api/v1/alerts/${alerts.body.data[0]!.id}`, { json: { status: "resolved" } })).status).toBe(200);
  expect((await owner.as("DELETE", `/api/v1/patients/${patient.id}`)).status).toBe(204);
  expect((await owner.as("DELETE", `/api/v1/tutors/${tutor.id}`)).status).toBe(204);

  const board = await owner.as<CursorPageBody<BoardVisitView>>("GET", "/api/v1/operations/visits?date_from=2026-01-15&date_to=2026-01-15");
  const row = board.body.data.find((v: { id: string }) => v.id === visit.id)!;
  expect(row, board.text).toBeDefined();
  expect(row.status).toBe("completed");
  expect(row.patient).toBeNull();
  expect(row.tutor).toBeNull();
});
