import type { ApiKeyWithSecretView } from "../../src/modules/mcp-keys/model";
import type { ReportView } from "../../src/modules/mcp-reports/model";
import type { UserView } from "../../src/modules/users/model";
import type { TestApp } from "./app";
import type { ClinicSession } from "./clinic";
import { makeIssuer } from "../billing/sii-fixtures";

/**
 * Every protected REST route, for the shared security suite (tests/security.test.ts).
 * Adding a route to the app without adding it here fails that suite.
 */
export interface ProtectedRoute {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path under /api/v1; `:id` is replaced by the id `seed` returns. */
  path: string;
  /** Roles allowed; absent means every role of the clinic. */
  roles?: readonly ("owner" | "vet" | "staff")[];
  /** A valid body, so that a refusal is about who asks and not about what they sent. */
  body?: (seeded: string | undefined) => unknown;
  /** Creates a record in the owner's clinic and returns its id (for `:id` routes). */
  seed?: (t: TestApp, owner: ClinicSession) => Promise<string>;
  /** A valid query string (with its `?`) for routes whose query is required. */
  query?: string;
  /** The GET path that shows the seeded record (default: `path`), to check a refusal changed nothing. */
  readBack?: string;
}

const seedUser = async (_t: TestApp, owner: ClinicSession) => {
  const r = await owner.as<UserView>("POST", "/api/v1/users", {
    json: { email: `seed.${Bun.randomUUIDv7()}@clinic.test`, name: "Seeded", role: "staff", password: "seeded password" },
  });
  return r.body.id;
};

const seedApiKey = async (_t: TestApp, owner: ClinicSession) => {
  const r = await owner.as<ApiKeyWithSecretView>("POST", "/api/v1/mcp/keys", { json: { name: "seeded", scopes: ["read"] } });
  return r.body.id;
};

const seedReport = async (_t: TestApp, owner: ClinicSession) => {
  const r = await owner.as<ReportView>("POST", "/api/v1/mcp/reports", { json: { name: `seeded_${Bun.randomUUIDv7().slice(-8)}`, title: "Seeded", sql: "SELECT count(*) AS n FROM tutors" } });
  if (r.status !== 201) throw new Error(`seeding a report failed: ${r.text}`);
  return r.body.id;
};

const seedWebhook = async (_t: TestApp, owner: ClinicSession) => {
  const r = await owner.as<{ id: string }>("POST", "/api/v1/webhooks", { json: { url: "http://127.0.0.1:9/hook", events: ["*"] } });
  return r.body.id;
};
const seedDelivery = async (t: TestApp, owner: ClinicSession) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1/webhooks/${await seedWebhook(t, owner)}/test`);
  return r.body.id;
};
const created = async (owner: ClinicSession, path: string, json: unknown) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1${path}`, { json });
  if (r.status !== 201) throw new Error(`seeding ${path} failed: ${r.text}`);
  return r.body.id;
};
const seedReminderRule = (_t: TestApp, owner: ClinicSession) => created(owner, "/reminder-rules", { kind: "vaccination_due", name: "Vacunas", offset: "-7d", channels: ["email"] });
export const seedTutor = (_t: TestApp, owner: ClinicSession) => created(owner, "/tutors", { name: "Seeded Tutor", phone: "+56911112222" });
export const seedPatient = async (t: TestApp, owner: ClinicSession) =>
  created(owner, "/patients", { tutor_id: await seedTutor(t, owner), name: "Seeded Pet", species: "dog" });
export const seedVisit = async (t: TestApp, owner: ClinicSession) =>
  created(owner, "/visits", { patient_id: await seedPatient(t, owner), scheduled_at: "2026-01-20T15:00:00Z", reason: "Control" });
const seedAlert = async (t: TestApp, owner: ClinicSession) => created(owner, "/alerts", { patient_id: await seedPatient(t, owner), kind: "vaccine_due", message: "Booster" });

export const seedInvoice = async (t: TestApp, owner: ClinicSession, emit = false) => {
  const id = await created(owner, "/billing/invoices", { tutor_id: await seedTutor(t, owner), items: [{ description: "Consulta", quantity: 1, unit_price: 10_000 }] });
  if (emit) await owner.as("POST", `/api/v1/billing/invoices/${id}/emit`);
  return id;
};
export const seedPayment = async (t: TestApp, owner: ClinicSession) =>
  created(owner, "/billing/payments", { invoice_id: await seedInvoice(t, owner, true), amount: 5_000, method: "cash" });
const seedRefund = async (t: TestApp, owner: ClinicSession) => created(owner, "/billing/refunds", { payment_id: await seedPayment(t, owner), amount: 100 });
const seedDocument = async (t: TestApp, owner: ClinicSession) => {
  await makeIssuer(owner, [39]);
  return created(owner, "/billing/sii/documents", { doc_type: 39, invoice_id: await seedInvoice(t, owner, true) });
};
const UNKNOWN = "00000000-0000-7000-8000-000000000000";

const CLINICAL: ProtectedRoute["roles"] = ["owner", "vet"];
export const seedNote = async (t: TestApp, owner: ClinicSession) => created(owner, `/visits/${await seedVisit(t, owner)}/notes`, { subjective: "Decaído", assessment: "Gastroenteritis" });
export const seedSignedNote = async (t: TestApp, owner: ClinicSession) => {
  const id = await seedNote(t, owner);
  const r = await owner.as("POST", `/api/v1/notes/${id}/sign`);
  if (r.status !== 200) throw new Error(`signing a note failed: ${r.text}`);
  return id;
};
export const seedVaccination = async (t: TestApp, owner: ClinicSession) =>
  created(owner, `/patients/${await seedPatient(t, owner)}/vaccinations`, { vaccine: "Nobivac Rabies", diseases: ["rabies"], given_at: "2026-01-10T15:00:00Z", next_due_on: "2027-01-10" });
export const seedPrescription = async (t: TestApp, owner: ClinicSession) =>
  created(owner, `/patients/${await seedPatient(t, owner)}/prescriptions`, { drug: "Meloxicam", dose: "0.1 mg/kg", route: "oral", frequency: "every 24 h", duration_days: 5 });

const crud = (path: string, seed: ProtectedRoute["seed"], create: () => unknown, patch: () => unknown): ProtectedRoute[] => [
  { method: "GET", path },
  { method: "POST", path, body: create },
  { method: "GET", path: `${path}/:id`, seed },
  { method: "PATCH", path: `${path}/:id`, seed, body: patch },
  { method: "DELETE", path: `${path}/:id`, seed },
];

/** Routes every role reads and only the owner changes. */
const ownerWrites = (routes: ProtectedRoute[]): ProtectedRoute[] => routes.map((r) => (r.method === "GET" ? r : { ...r, roles: ["owner"] as const }));
const seedAppointmentType = (_t: TestApp, owner: ClinicSession) => created(owner, "/appointment-types", { name: "Seeded type", duration_minutes: 30 });
const seedRoom = (_t: TestApp, owner: ClinicSession) => created(owner, "/rooms", { name: `Seeded room ${Bun.randomUUIDv7().slice(-6)}` });
let closedDays = 0;
/** Each closure on a day of its own (a day closes once). */
const seedClosure = (_t: TestApp, owner: ClinicSession) => created(owner, "/clinic/closures", { day: new Date(Date.UTC(2030, 0, 1 + closedDays++)).toISOString().slice(0, 10) });

export const PROTECTED_ROUTES: ProtectedRoute[] = [
  ...crud("/tutors", seedTutor, () => ({ name: "T" }), () => ({ name: "Renamed" })),
  ...crud("/patients", seedPatient, () => ({ tutor_id: "00000000-0000-7000-8000-000000000000", name: "P", species: "cat" }), () => ({ name: "Renamed" })),
  ...crud("/visits", seedVisit, () => ({ patient_id: "00000000-0000-7000-8000-000000000000", scheduled_at: "2026-01-20T15:00:00Z" }), () => ({ notes: "changed" })),
  ...crud("/alerts", seedAlert, () => ({ kind: "custom", message: "m" }), () => ({ status: "resolved" })),
  { method: "GET", path: "/operations/visits" },
  { method: "POST", path: "/visits/:id/notes", roles: CLINICAL, seed: seedVisit, body: () => ({ subjective: "Tos" }), readBack: "/visits/:id/notes" },
  { method: "GET", path: "/visits/:id/notes", seed: seedVisit },
  { method: "GET", path: "/notes/:id", seed: seedSignedNote },
  { method: "PATCH", path: "/notes/:id", roles: CLINICAL, seed: seedNote, body: () => ({ plan: "Control en 7 días" }) },
  { method: "DELETE", path: "/notes/:id", roles: CLINICAL, seed: seedNote },
  { method: "POST", path: "/notes/:id/sign", roles: CLINICAL, seed: seedNote, readBack: "/notes/:id" },
  { method: "POST", path: "/notes/:id/addenda", roles: CLINICAL, seed: seedSignedNote, body: () => ({ text: "Corrección" }), readBack: "/notes/:id" },
  { method: "POST", path: "/patients/:id/vitals", roles: CLINICAL, seed: seedPatient, body: () => ({ weight_grams: 12_000 }), readBack: "/patients/:id/vitals" },
  { method: "GET", path: "/patients/:id/vitals", seed: seedPatient },
  { method: "POST", path: "/patients/:id/vaccinations", roles: CLINICAL, seed: seedPatient, body: () => ({ vaccine: "Nobivac Rabies", diseases: ["rabies"] }), readBack: "/patients/:id/vaccinations" },
  { method: "GET", path: "/patients/:id/vaccinations", seed: seedPatient },
  { method: "GET", path: "/vaccinations/due" },
  { method: "GET", path: "/vaccinations/:id", seed: seedVaccination },
  { method: "PATCH", path: "/vaccinations/:id/reminder", seed: seedVaccination, body: () => ({ reminder_status: "contacted" }), readBack: "/vaccinations/:id" },
  { method: "POST", path: "/patients/:id/prescriptions", roles: CLINICAL, seed: seedPatient, body: () => ({ drug: "Amoxicilina", dose: "20 mg/kg", route: "oral", frequency: "every 12 h" }), readBack: "/patients/:id/prescriptions" },
  { method: "GET", path: "/patients/:id/prescriptions", seed: seedPatient },
  { method: "GET", path: "/prescriptions/:id", seed: seedPrescription },
  { method: "POST", path: "/prescriptions/:id/cancel", roles: CLINICAL, seed: seedPrescription, body: () => ({ reason: "Dosis equivocada" }), readBack: "/prescriptions/:id" },
  { method: "GET", path: "/patients/:id/timeline", seed: seedPatient },
  { method: "GET", path: "/billing/invoices" },
  { method: "POST", path: "/billing/invoices", body: () => ({ tutor_id: UNKNOWN, items: [{ description: "x", quantity: 1, unit_price: 1 }] }) },
  { method: "GET", path: "/billing/invoices/:id", seed: (t, o) => seedInvoice(t, o) },
  { method: "PATCH", path: "/billing/invoices/:id", seed: (t, o) => seedInvoice(t, o), body: () => ({ notes: "changed" }) },
  { method: "POST", path: "/billing/invoices/:id/emit", seed: (t, o) => seedInvoice(t, o), readBack: "/billing/invoices/:id" },
  { method: "POST", path: "/billing/invoices/:id/void", seed: (t, o) => seedInvoice(t, o), readBack: "/billing/invoices/:id" },
  { method: "GET", path: "/billing/payments" },
  { method: "POST", path: "/billing/payments", body: () => ({ invoice_id: UNKNOWN, amount: 1, method: "cash" }) },
  { method: "GET", path: "/billing/payments/:id", seed: seedPayment },
  { method: "GET", path: "/billing/refunds", roles: ["owner"] },
  { method: "POST", path: "/billing/refunds", roles: ["owner"], body: () => ({ payment_id: UNKNOWN, amount: 1 }) },
  { method: "GET", path: "/billing/refunds/:id", roles: ["owner"], seed: seedRefund },
  { method: "GET", path: "/billing/sii/documents" },
  { method: "POST", path: "/billing/sii/documents", body: () => ({ doc_type: 39, invoice_id: UNKNOWN }) },
  { method: "GET", path: "/billing/sii/documents/:id", seed: seedDocument },
  { method: "GET", path: "/billing/sii/documents/:id/xml", seed: seedDocument },
  { method: "GET", path: "/billing/sii/documents/:id/envelope", seed: seedDocument },
  { method: "GET", path: "/billing/sii/documents/:id/pdf", seed: seedDocument },
  { method: "GET", path: "/billing/sii/envelopes" },
  { method: "GET", path: "/billing/sii/cafs" },
  { method: "POST", path: "/billing/sii/cafs", roles: ["owner"], body: () => ({ xml: "<AUTORIZACION/>" }) },
  { method: "GET", path: "/billing/sii/certificate" },
  { method: "PUT", path: "/billing/sii/certificate", roles: ["owner"], body: () => ({ pkcs12: "AAAA", password: "x" }) },
  { method: "POST", path: "/mcp/keys", roles: ["owner"], body: () => ({ name: "k", scopes: ["read"] }) },
  { method: "GET", path: "/mcp/keys", roles: ["owner"] },
  { method: "GET", path: "/mcp/keys/:id", roles: ["owner"], seed: seedApiKey },
  { method: "POST", path: "/mcp/keys/:id/rotate", roles: ["owner"], seed: seedApiKey, readBack: "/mcp/keys/:id" },
  { method: "DELETE", path: "/mcp/keys/:id", roles: ["owner"], seed: seedApiKey },
  { method: "POST", path: "/mcp/reports", roles: ["owner"], body: () => ({ name: `r_${Bun.randomUUIDv7().slice(-8)}`, title: "R", sql: "SELECT 1 AS one" }) },
  { method: "GET", path: "/mcp/reports", roles: ["owner"] },
  { method: "GET", path: "/mcp/reports/templates", roles: ["owner"] },
  { method: "GET", path: "/mcp/reports/:id", roles: ["owner"], seed: seedReport },
  { method: "PATCH", path: "/mcp/reports/:id", roles: ["owner"], seed: seedReport, body: () => ({ title: "Changed" }) },
  { method: "DELETE", path: "/mcp/reports/:id", roles: ["owner"], seed: seedReport },
  { method: "GET", path: "/mcp/usage", roles: ["owner"] },
  { method: "POST", path: "/admin/backups", roles: ["owner"] },
  { method: "GET", path: "/admin/backups", roles: ["owner"] },
  // Install-wide: install administrators only (tests/install/admin.test.ts walks them with another clinic's owner).
  { method: "GET", path: "/admin/install", roles: ["owner"] },
  { method: "POST", path: "/admin/invitations", roles: ["owner"], body: () => ({}) },
  { method: "GET", path: "/admin/invitations", roles: ["owner"] },
  { method: "DELETE", path: "/admin/invitations/:id", roles: ["owner"] },
  { method: "GET", path: "/mcp/usage/summary", roles: ["owner"] },
  { method: "GET", path: "/mcp/usage/daily", roles: ["owner"] },
  { method: "GET", path: "/mcp/authorization-requests", roles: ["owner"], query: "?request=not.a.sealed.request" },
  { method: "POST", path: "/mcp/authorization-requests/decision", roles: ["owner"], body: () => ({ request: "not.a.sealed.request", approve: false }) },
  { method: "GET", path: "/mcp/connections", roles: ["owner"] },
  { method: "DELETE", path: "/mcp/connections/:id", roles: ["owner"] },
  { method: "POST", path: "/auth/logout" },
  { method: "GET", path: "/auth/me" },
  { method: "POST", path: "/auth/password", body: () => ({ current_password: "not the password", new_password: "a new long password" }) },
  { method: "GET", path: "/clinic" },
  { method: "PATCH", path: "/clinic", roles: ["owner"], body: () => ({ giro: "Servicios veterinarios" }), readBack: "/clinic" },
  { method: "GET", path: "/users", roles: ["owner"] },
  { method: "POST", path: "/users", roles: ["owner"], body: () => ({ email: `x.${Bun.randomUUIDv7()}@clinic.test`, name: "X", role: "vet", password: "0123456789" }) },
  { method: "GET", path: "/users/:id", roles: ["owner"], seed: seedUser },
  { method: "PATCH", path: "/users/:id", roles: ["owner"], seed: seedUser, body: () => ({ name: "Renamed" }) },
  { method: "DELETE", path: "/users/:id", roles: ["owner"], seed: seedUser },
  { method: "GET", path: "/audit", roles: ["owner"] },
  { method: "POST", path: "/webhooks", roles: ["owner"], body: () => ({ url: "http://127.0.0.1:9/hook", events: ["*"] }) },
  { method: "GET", path: "/webhooks", roles: ["owner"] },
  { method: "GET", path: "/webhooks/:id", roles: ["owner"], seed: seedWebhook },
  { method: "PATCH", path: "/webhooks/:id", roles: ["owner"], seed: seedWebhook, body: () => ({ description: "changed" }) },
  { method: "DELETE", path: "/webhooks/:id", roles: ["owner"], seed: seedWebhook },
  { method: "POST", path: "/webhooks/:id/rotate-secret", roles: ["owner"], seed: seedWebhook, readBack: "/webhooks/:id" },
  { method: "POST", path: "/webhooks/:id/test", roles: ["owner"], seed: seedWebhook, readBack: "/webhooks/:id" },
  { method: "GET", path: "/webhooks/:id/deliveries", roles: ["owner"], seed: seedWebhook },
  { method: "GET", path: "/webhooks/deliveries/:id/attempts", roles: ["owner"], seed: seedDelivery },
  { method: "POST", path: "/webhooks/deliveries/:id/retry", roles: ["owner"], seed: seedDelivery, readBack: "/audit" },
  { method: "POST", path: "/tutors/:id/consents", seed: seedTutor, body: () => ({ channel: "email", purpose: "reminders", granted: true }) },
  { method: "GET", path: "/tutors/:id/consents", seed: seedTutor },
  { method: "GET", path: "/tutors/:id/export", roles: ["owner"], seed: seedTutor },
  { method: "POST", path: "/tutors/:id/erase", roles: ["owner"], seed: seedTutor, body: () => ({ confirm_name: "Seeded Tutor" }), readBack: "/tutors/:id" },
  { method: "POST", path: "/reminder-rules", roles: ["owner"], body: () => ({ kind: "vaccination_due", name: "Vacunas", offset: "-7d", channels: ["email"] }) },
  { method: "GET", path: "/reminder-rules", roles: ["owner"] },
  { method: "GET", path: "/reminder-rules/:id", roles: ["owner"], seed: seedReminderRule },
  { method: "PATCH", path: "/reminder-rules/:id", roles: ["owner"], seed: seedReminderRule, body: () => ({ name: "Renamed" }) },
  { method: "DELETE", path: "/reminder-rules/:id", roles: ["owner"], seed: seedReminderRule },
  { method: "GET", path: "/reminders" },
  { method: "GET", path: "/reminders/channels" },
  { method: "GET", path: "/clinic/calendar-settings" },
  { method: "PATCH", path: "/clinic/calendar-settings", roles: ["owner"], body: () => ({ auto_confirm_online_bookings: true }) },
  ...ownerWrites(crud("/appointment-types", seedAppointmentType, () => ({ name: "Consulta", duration_minutes: 30 }), () => ({ name: "Renamed" }))),
  ...ownerWrites(crud("/rooms", seedRoom, () => ({ name: "Box" }), () => ({ name: "Renamed" }))),
  { method: "GET", path: "/availability", query: "?appointment_type_id=00000000-0000-7000-8000-000000000000&from=2026-01-20&to=2026-01-21" },
  // A person's own hours and time off are theirs or the owner's: another staff member is refused.
  { method: "GET", path: "/users/:id/working-hours", seed: seedUser },
  { method: "PUT", path: "/users/:id/working-hours", roles: ["owner"], seed: seedUser, body: () => ({ intervals: [{ weekday: 1, start: "09:00", end: "13:00" }] }) },
  { method: "GET", path: "/users/:id/time-off", seed: seedUser },
  { method: "POST", path: "/users/:id/time-off", roles: ["owner"], seed: seedUser, body: () => ({ starts_at: "2026-02-02T12:00:00Z", ends_at: "2026-02-02T16:00:00Z" }) },
  { method: "DELETE", path: "/users/:id/time-off/:itemId", roles: ["owner"], seed: seedUser, readBack: "/users/:id/time-off" },
  // A person's calendar feed is theirs or the owner's: another staff member is refused.
  { method: "GET", path: "/users/:id/calendar-feed", roles: ["owner"], seed: seedUser },
  { method: "POST", path: "/users/:id/calendar-feed", roles: ["owner"], seed: seedUser, readBack: "/users/:id/calendar-feed" },
  { method: "DELETE", path: "/users/:id/calendar-feed", roles: ["owner"], seed: seedUser, readBack: "/users/:id/calendar-feed" },
  { method: "GET", path: "/clinic/closures" },
  { method: "POST", path: "/clinic/closures", roles: ["owner"], body: () => ({ day: "2026-09-18" }) },
  { method: "DELETE", path: "/clinic/closures/:id", roles: ["owner"], seed: seedClosure, readBack: "/clinic/closures" },
];

/** REST routes that need no access token (the reminder and booking links and WhatsApp's webhook carry their own signature; online booking is for tutors without an account; the calendar feed's token is its secret). */
export const PUBLIC_ROUTES = [
  "POST /auth/register", "POST /auth/login", "POST /auth/refresh", "GET /auth/setup", "POST /auth/setup",
  "GET /calendar/:token",
  "GET /integrations/whatsapp/webhook", "POST /integrations/whatsapp/webhook",
  ...["unsubscribe", "confirm", "cancel"].flatMap((action) => [`GET /public/reminders/${action}`, `POST /public/reminders/${action}`]),
  "GET /public/clinics/:slug", "GET /public/clinics/:slug/availability", "POST /public/clinics/:slug/bookings",
  "GET /public/bookings/manage", "POST /public/bookings/manage",
];
