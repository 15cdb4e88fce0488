/** Prescriptions (never edited, cancelled with a reason) and the patient's timeline, newest first. */
import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { NoteView } from "../../src/modules/notes/model";
import type { PrescriptionView } from "../../src/modules/prescriptions/model";
import type { TimelineItemView } from "../../src/modules/timeline/model";
import type { VisitView } from "../../src/modules/visits/model";
import type { ErrorBody, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, vet, staff, other } = made), { otherClinic: true, members: ["vet", "staff"] });

const rx = { drug: "Amoxicilina/ácido clavulánico 250 mg", dose: "12.5 mg/kg", route: "oral", frequency: "every 12 h", duration_days: 7, quantity: "14 comprimidos", instructions: "Con comida" };

async function patientWithTutor() {
  const tutor = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Camila Rojas", phone: "+56922223333" } });
  const patient = await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: tutor.body.id, name: "Luna", species: "cat" } });
  return { tutor: tutor.body.id, patient: patient.body.id };
}

test("a prescription is issued by a vet, cannot be edited, and is cancelled once with a reason", async () => {
  const { patient } = await patientWithTutor();
  const issued = await vet.as<PrescriptionView>("POST", `/api/v1/patients/${patient}/prescriptions`, { json: rx });
  expect(issued.status, issued.text).toBe(201);
  expect(issued.body).toMatchObject({ ...rx, prescribed_by: vet.user.id, status: "active", cancelled_at: null });
  expect((await staff.as("POST", `/api/v1/patients/${patient}/prescriptions`, { json: rx })).status).toBe(403);
  expect((await vet.as("PATCH", `/api/v1/prescriptions/${issued.body.id}`, { json: { dose: "x" } })).status).toBe(404);
  expect((await vet.as("DELETE", `/api/v1/prescriptions/${issued.body.id}`)).status).toBe(404);
  expect((await vet.as("POST", `/api/v1/prescriptions/${issued.body.id}/cancel`, { json: {} })).status).toBe(422);
  const cancelled = await owner.as<PrescriptionView>("POST", `/api/v1/prescriptions/${issued.body.id}/cancel`, { json: { reason: "Alergia a betalactámicos" } });
  expect(cancelled.body).toMatchObject({ status: "cancelled", cancelled_by: owner.user.id, cancel_reason: "Alergia a betalactámicos", dose: rx.dose });
  const again = await vet.as<ErrorBody>("POST", `/api/v1/prescriptions/${issued.body.id}/cancel`, { json: { reason: "otra" } });
  expect(again.status, again.text).toBe(409);
  expect((await staff.as<CursorPageBody<PrescriptionView>>("GET", `/api/v1/patients/${patient}/prescriptions`)).body.data).toEqual([cancelled.body]);
});

test("a prescription's visit must be one of the same patient (422 naming visit_id)", async () => {
  const a = await patientWithTutor();
  const b = await patientWithTutor();
  const visit = await owner.as<VisitView>("POST", "/api/v1/visits", { json: { patient_id: b.patient, scheduled_at: "2026-01-15T13:00:00Z" } });
  const r = await vet.as<{ details: { fields: { path: string }[] } }>("POST", `/api/v1/patients/${a.patient}/prescriptions`, { json: { ...rx, visit_id: visit.body.id } });
  expect(r.status, r.text).toBe(422);
  expect(r.body.details.fields[0]!.path).toBe("body.visit_id");
});

test("the timeline: one list newest first of visits, signed notes and addenda, vitals, vaccinations, prescriptions and invoices", async () => {
  const { tutor, patient } = await patientWithTutor();
  const step = () => t.clock.advance(60_000);
  const visit = await owner.as<VisitView>("POST", "/api/v1/visits", { json: { patient_id: patient, vet_id: vet.user.id, scheduled_at: "2026-01-15T12:00:30Z", reason: "Control anual" } });
  step();
  await owner.as("PATCH", `/api/v1/visits/${visit.body.id}`, { json: { status: "in_progress" } });
  step();
  await vet.as("POST", `/api/v1/patients/${patient}/vitals`, { json: { weight_grams: 4_200, temperature_dc: 386 } });
  step();
  const note = await vet.as<NoteView>("POST", `/api/v1/visits/${visit.body.id}/notes`, { json: { assessment: "Sana", diagnoses: ["control sano"] } });
  const draftOnly = await vet.as<NoteView>("POST", `/api/v1/visits/${visit.body.id}/notes`, { json: { plan: "borrador" } });
  step();
  await vet.as("POST", `/api/v1/patients/${patient}/vaccinations`, { json: { vaccine: "Felocell 4", diseases: ["panleukopenia", "rhinotracheitis", "calicivirus", "chlamydia"], next_due_on: "2027-01-15" } });
  step();
  await vet.as("POST", `/api/v1/patients/${patient}/prescriptions`, { json: { ...rx, visit_id: visit.body.id } });
  step();
  await vet.as("POST", `/api/v1/notes/${note.body.id}/sign`);
  step();
  await owner.as("POST", `/api/v1/notes/${note.body.id}/addenda`, { json: { text: "Tutor informa que come bien" } });
  step();
  await owner.as("PATCH", `/api/v1/visits/${visit.body.id}`, { json: { status: "completed" } });
  step();
  const invoice = await owner.as<InvoiceView>("POST", "/api/v1/billing/invoices", { json: { tutor_id: tutor, visit_id: visit.body.id, items: [{ description: "Consulta", quantity: 1, unit_price: 25_000 }] } });
  expect(invoice.status, invoice.text).toBe(201);

  const kinds: string[] = [];
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; text: string; body: CursorPageBody<TimelineItemView> } = await staff.as<CursorPageBody<TimelineItemView>>("GET", `/api/v1/patients/${patient}/timeline?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.status, page.text).toBe(200);
    kinds.push(...page.body.data.map((i) => i.kind));
    ids.push(...page.body.data.map((i) => i.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  expect(kinds).toEqual(["invoice", "visit", "addendum", "note", "prescription", "vaccination", "vitals"]);
  expect(ids).not.toContain(draftOnly.body.id);
  const full = await staff.as<CursorPageBody<TimelineItemView>>("GET", `/api/v1/patients/${patient}/timeline`);
  const signed = full.body.data.find((i) => i.kind === "note")!;
  expect(signed.record).toMatchObject({ id: note.body.id, status: "signed", addenda: [{ text: "Tutor informa que come bien" }] });
  expect(full.body.data.find((i) => i.kind === "vitals")!.summary).toBe("Vitals: 4.2 kg, 38.6 °C");
  const onlyVitals = await staff.as<CursorPageBody<TimelineItemView>>("GET", `/api/v1/patients/${patient}/timeline?kind=vitals,vaccination`);
  expect(onlyVitals.body.data.map((i) => i.kind)).toEqual(["vaccination", "vitals"]);
  expect((await other.as("GET", `/api/v1/patients/${patient}/timeline`)).status).toBe(404);
  expect((await staff.as("GET", `/api/v1/patients/${patient}/timeline?kind=diary`)).status).toBe(422);
});
