/**
 * The clinic console in a real browser, against a spawned server on the embedded database:
 * `bun run test:browser` (with the other browser checks); `.ci/run` runs it.
 */
import AxeBuilder from "@axe-core/playwright";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { call, startServer } from "../helpers/server-process";
import { createTestAuthority } from "../../src/modules/billing/sii/test-authority";
import { existsSync } from "node:fs";
import { Firefox, FIREFOX_PATH } from "./firefox";
import { assert, BrowserRun } from "./harness";
import { startDemoServer, type DemoServer } from "./demo-server";
import { readFileSync } from "node:fs";

const PASSWORD = "a long password";
const TABLET = { width: 1024, height: 768 };

// The browser first: one that cannot start (Chromium not installed) then leaves no server behind.
const run = await BrowserRun.launch();
const dataDir = mkdtempSync(join(tmpdir(), "vet-console-"));
// A stand-in SII whose CAFs the server trusts, so the console can issue signed boletas and facturas.
const authority = createTestAuthority();
writeFileSync(join(dataDir, "test-caf-keys.pem"), authority.publicKeyPem);
const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn", SII_TEST_CAF_KEYS: join(dataDir, "test-caf-keys.pem") });
const base = server.baseUrl.replace("localhost", "127.0.0.1");

// The clinic: its owner, a receptionist, a tutor with a patient and a visit at 10:00 today.
const owner = await call(base, "POST", "/api/v1/auth/register", { json: { email: "owner@aromos.cl", password: PASSWORD, name: "Carolina Fuentes", clinic_name: "Los Aromos", timezone: "America/Santiago" } });
const ownerToken: string = owner.body.access_token;
await call(base, "POST", "/api/v1/users", { token: ownerToken, json: { email: "desk@aromos.cl", password: PASSWORD, name: "Andrea Torres", role: "staff" } });
const tutor = await call(base, "POST", "/api/v1/tutors", { token: ownerToken, json: { name: "Camila Rojas", phone: "+56 9 1234 5678" } });
const luna = await call(base, "POST", "/api/v1/patients", { token: ownerToken, json: { tutor_id: tutor.body.id, name: "Luna", species: "cat" } });
const today = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Santiago" }).format(new Date());
await call(base, "PATCH", "/api/v1/clinic", { token: ownerToken, json: { rut: "76.086.428-5", legal_name: "Servicios Veterinarios Los Aromos SpA", giro: "Servicios veterinarios", economic_activity_code: "750000", address: "Av. Los Aromos 1234", commune: "Ñuñoa" } });
for (const docType of [33, 39, 61]) await call(base, "POST", "/api/v1/billing/sii/cafs", { token: ownerToken, json: { xml: authority.caf({ rut: "76.086.428-5", docType, from: 1, to: 100, authorizedOn: today }) } });
await call(base, "PUT", "/api/v1/billing/sii/certificate", { token: ownerToken, json: { pkcs12: authority.pkcs12({ holderRut: "12.345.678-5", password: "p12", notBefore: new Date(Date.now() - 86_400_000), notAfter: new Date(Date.now() + 365 * 86_400_000) }), password: "p12" } });
const visit = await call(base, "POST", "/api/v1/visits", { token: ownerToken, json: { patient_id: luna.body.id, scheduled_at: zonedInstant(today, "10:00"), reason: "Control anual" } });

/** A wall-clock time in Santiago as an instant (the test's own arithmetic, not the console's). */
function zonedInstant(date: string, time: string): string {
  for (const offset of ["-03:00", "-04:00"]) {
    const instant = new Date(`${date}T${time}:00${offset}`);
    const shown = new Intl.DateTimeFormat("en-GB", { timeZone: "America/Santiago", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(instant);
    if (shown === time) return instant.toISOString();
  }
  throw new Error("no offset fits");
}

async function signIn(page: Page, email: string, password = PASSWORD, at = base) {
  await page.goto(`${at}/#/today`);
  await page.locator('input[name="email"]').fill(email);
  await page.locator('input[name="password"]').fill(password);
  await page.locator('button[type="submit"]').click();
  await page.locator(".board[aria-busy=false]").waitFor();
}

const api = async (method: string, path: string, json?: unknown) => (await call(base, method, path, { token: ownerToken, json })).body;
const column = (page: Page, status: string) => page.locator(`.column[data-status="${status}"]`);

async function axeScan(page: Page, where: string): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${where}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/**
 * The language test's reading of a page: every text node a person sees or hears (captions,
 * options, hidden labels included) and every aria-label, placeholder and title; technical
 * identifiers (`<code>`, `<pre>`: SQL, keys, event codes, tool names) are left out. Run in the
 * page (Chromium and Firefox), so it is a string.
 */
const collectTexts = `function () {
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement?.closest("script, style, code, pre, noscript")) continue;
    const text = node.textContent.trim();
    if (text) texts.push(text);
  }
  for (const element of document.querySelectorAll("[aria-label], [placeholder], [title]")) {
    for (const name of ["aria-label", "placeholder", "title"]) if (element.getAttribute(name)) texts.push(element.getAttribute(name));
  }
  return JSON.stringify(texts);
}`;

/** Resolves once the page shows its heading, nothing is busy, and no answer arrived for half a second (as networkidle). */
const settled = (also = "true") => `new Promise((resolve) => {
  let seen = -1, quiet = 0;
  const tick = () => {
    const count = performance.getEntriesByType("resource").length;
    const ready = document.querySelector("main h1") && !document.querySelector("[aria-busy=true]") && (${also});
    quiet = ready && count === seen ? quiet + 100 : 0;
    seen = count;
    if (quiet >= 500) resolve(true); else setTimeout(tick, 100);
  };
  tick();
  setTimeout(() => resolve(false), 20000);
})`;

/** Values the API enumerates: shown as they are, they are untranslated. */
const RAW_VALUES = new Set(["dog", "cat", "bird", "rabbit", "rodent", "reptile", "horse", "male", "female", "unknown", "draft", "emitted", "paid", "void", "credited", "cash", "card", "transfer", "owner", "vet", "staff", "read", "query", "clinic_context", "pending", "succeeded", "failed", "production", "certification", "scheduled", "in_progress", "completed", "cancelled", "no_show", "active", "resolved", "contacted", "booked", "declined", "rate_limited", "blocked", "denied", "vaccine_due", "follow_up", "allergy", "overdue_invoice", "custom"]);
/** Words of the console's English that must not appear in Spanish, and the reverse (the demo's own data is Spanish, so the Spanish list keeps to interface words). */
const ENGLISH_WORDS = new Set(["the", "and", "with", "Save", "Cancel", "Invoice", "Invoices", "Sale", "Sales", "Search", "Status", "Date", "Loading", "Patient", "Patients", "Visit", "Visits", "Weight", "Signed", "Draft", "Paid", "Created", "Prescription", "Prescriptions", "Vaccine", "Vaccines", "Settings", "Today", "Name", "Phone", "Email", "Amount", "Method", "Refund", "Issue", "Record", "Sign", "Due", "Overdue", "Week", "Calls", "Never", "Revoke", "Rotate", "Owner", "Reception", "Delivered", "Failed", "Pending", "Answered", "Blocked", "Dog", "Cat", "Male", "Female", "Cash", "Card", "changed", "created", "deleted", "Activity", "Anyone", "Any", "Person", "Language", "Approve", "Deny", "Assistant", "subjective", "objective", "assessment", "measured", "weight", "temperature", "given", "lot", "breed", "started", "completed", "reason", "kind", "message"]);
const SPANISH_WORDS = new Set(["Guardar", "Cancelar", "Buscar", "Cargando", "Ajustes", "Hoy", "Nombre", "Teléfono", "Monto", "Perro", "Gato", "Macho", "Hembra", "Efectivo", "Tarjeta", "creó", "modificó", "emitió", "Emitir", "Borrador", "Pagada", "Firmada", "Recetar", "Vigente", "Entregado", "Respondida", "Cualquiera", "Desde", "Hasta", "Recetas", "Vacunas", "Ventas", "Pagos", "Estado", "Fecha", "Correo", "Idioma", "Recepción", "Veterinario", "Dueño", "Actividad", "Persona", "Aprobar", "Rechazar", "Peso", "Signos"]);
/** The console's message keys, read from its dictionary (its module needs the DOM). */
const MESSAGE_KEYS = new Set([...readFileSync(join(import.meta.dir, "../../src/console/i18n.ts"), "utf8").matchAll(/"([a-zA-Z]+(?:\.[a-zA-Z0-9_]+)+)":/g)].map((m) => m[1]!));

/** What a page says that is not in `language`: a message key, a raw value, a word of the other language. */
function languageProblems(language: "es" | "en", where: string, texts: string[]): string[] {
  const problems: string[] = texts.length < 3 ? [`${language} ${where}: only ${texts.length} texts read: ${JSON.stringify(texts)}`] : [];
  const otherWords = language === "es" ? ENGLISH_WORDS : SPANISH_WORDS;
  for (const text of texts) {
    // Addresses (emails, links) are data, not language.
    const words = text.replace(/\S+@\S+|https?:\/\/\S+/g, " ");
    const keys = words.match(/[a-zA-Z]+(?:\.[a-zA-Z0-9_]+)+/g)?.filter((token) => MESSAGE_KEYS.has(token)) ?? [];
    if (keys.length) problems.push(`${language} ${where}: untranslated key ${keys.join(", ")} in "${text}"`);
    if (RAW_VALUES.has(text)) problems.push(`${language} ${where}: raw value "${text}"`);
    const tokens = words.match(/[\p{L}_]+/gu) ?? [];
    if (language === "es") for (const token of tokens) if (RAW_VALUES.has(token)) problems.push(`${language} ${where}: raw value "${token}" in "${text}"`);
    for (const token of tokens) if (otherWords.has(token)) problems.push(`${language} ${where}: "${token}" in "${text}"`);
  }
  return [...new Set(problems)];
}

/** Every page of the console with real records of the demo clinic, the consent page's request included. */
async function languagePages(at: string, owner: { email: string; password: string }): Promise<string[]> {
  const token = (await call(at, "POST", "/api/v1/auth/login", { json: owner })).body.access_token;
  const get = async (path: string) => (await call(at, "GET", path, { token })).body;
  const paid = (await get("/api/v1/billing/invoices?status=paid&limit=50")).data.find((invoice: { visit_id: string | null }) => invoice.visit_id);
  const visit = await get(`/api/v1/visits/${paid.visit_id}`);
  let patientId = visit.patient_id;
  for (const candidate of (await get("/api/v1/patients?limit=100")).data) {
    if ((await get(`/api/v1/patients/${candidate.id}/prescriptions`)).data.length) {
      patientId = candidate.id;
      break;
    }
  }
  const patient = await get(`/api/v1/patients/${patientId}`);
  // An assistant's authorization request, as /authorize hands it to the consent page.
  const redirect = "http://127.0.0.1:9/callback";
  const client = await call(at, "POST", "/register", { json: { client_name: "Asistente de prueba", redirect_uris: [redirect], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "none" } });
  const authorize = new URL(`${at}/authorize`);
  for (const [name, value] of Object.entries({ response_type: "code", client_id: client.body.client_id, redirect_uri: redirect, code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", state: "estado", scope: "read query clinic_context" })) authorize.searchParams.set(name, value);
  const consent = (await fetch(authorize, { redirect: "manual" })).headers.get("location") ?? "";
  assert(consent.includes("#/oauth/consent?request="), `/authorize answered ${consent}`);
  return ["#/today", "#/calendar", "#/tutors", `#/tutors/${patient.tutor_id}`, `#/patients/${patient.id}`, `#/visits/${visit.id}`, "#/due", "#/billing", `#/invoices/${paid.id}`, "#/activity", "#/webhooks", "#/mcp", "#/settings", consent.slice(consent.indexOf("#"))];
}

const demoLogin = (demo: DemoServer, role: string) => demo.logins.find((login) => login.role === role)!;
const daysAgo = (days: number) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/Santiago" }).format(new Date(Date.now() - days * 86_400_000));

let invoiceUrl = "";
try {
  const ownerContext = await run.context({ viewport: TABLET, locale: "en-US" });
  const page = await ownerContext.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  // The page's Content-Security-Policy (its own scripts and styles only) must leave every screen
  // and chart working: a refused script, style or request is reported on the console.
  const policyRefusals: string[] = [];
  page.on("console", (message) => void (/Content Security Policy/i.test(message.text()) && policyRefusals.push(message.text())));

  await run.check("sign in; the refresh cookie keeps the session across a reload; the access token is in memory only", async () => {
    await signIn(page, "owner@aromos.cl");
    await page.reload();
    await page.locator(".board[aria-busy=false]").waitFor();
    // A string, so the type check needs no DOM types.
    const stored = String(await page.evaluate("JSON.stringify({ ...localStorage, ...sessionStorage }) + document.cookie"));
    assert(!stored.includes("eyJ"), `a token is readable by scripts: ${stored}`);
  });

  await run.check("move a visit through its states on today's board", async () => {
    const card = () => page.locator(`[data-visit-id="${visit.body.id}"]`);
    await column(page, "scheduled").locator(`[data-visit-id="${visit.body.id}"]`).waitFor();
    await card().getByRole("button", { name: "Start" }).click();
    await column(page, "in_progress").locator(`[data-visit-id="${visit.body.id}"]`).waitFor();
    await card().getByRole("button", { name: "Complete" }).click();
    await column(page, "completed").locator(`[data-visit-id="${visit.body.id}"]`).waitFor();
    const stored = await api("GET", `/api/v1/visits/${visit.body.id}`);
    assert(stored.status === "completed" && stored.started_at && stored.completed_at, JSON.stringify(stored));
  });

  await run.check("the completed visit shows its note unsigned; the vet's SOAP draft is saved, signed, and corrected by an addendum", async () => {
    const card = () => page.locator(`[data-visit-id="${visit.body.id}"]`);
    await card().getByTestId("needs-signed-note").waitFor();
    await card().getByRole("link", { name: "Clinical note" }).click();
    await page.getByRole("button", { name: "Write the consultation note" }).click();
    const draft = page.getByTestId("soap-draft");
    await draft.locator('textarea[name="subjective"]').fill("Tutora refiere buen apetito");
    await draft.locator('textarea[name="assessment"]').fill("Paciente sana");
    await draft.locator('input[name="diagnoses"]').fill("control sano");
    await draft.getByRole("button", { name: "Save" }).click();
    await page.locator(".notice.ok").waitFor();
    await draft.getByRole("button", { name: "Sign (final)" }).click();
    const signed = page.getByTestId("soap-signed");
    await signed.getByText("Paciente sana").waitFor();
    await signed.locator('textarea[name="addendum"]').fill("Se agenda control en un año");
    await signed.getByRole("button", { name: "Add addendum" }).click();
    await signed.locator(".addenda li", { hasText: "Se agenda control en un año" }).waitFor();
    const notes = await api("GET", `/api/v1/visits/${visit.body.id}/notes`);
    assert(notes.data.length === 1 && notes.data[0].status === "signed" && notes.data[0].diagnoses[0] === "control sano" && notes.data[0].addenda.length === 1, JSON.stringify(notes.data));
    await page.goto(`${base}/#/today`);
    await card().waitFor();
    assert((await card().getByTestId("needs-signed-note").count()) === 0, "the board still flags a visit whose note is signed");
  });

  await run.check("the patient page: vitals with the weight chart, a vaccination, and the timeline", async () => {
    await page.goto(`${base}/#/patients/${luna.body.id}`);
    const vitals = page.getByTestId("vitals-form");
    for (const [i, kg] of ["4.1", "4,3"].entries()) {
      await vitals.locator('input[name="weight"]').fill(kg);
      await vitals.locator('input[name="temperature"]').fill("38.6");
      await vitals.getByRole("button", { name: "Record vitals" }).click();
      // Saved once the timeline shows it (the form clears itself then).
      await page.getByTestId("timeline").locator('[data-kind="vitals"]').nth(i).waitFor();
    }
    await page.getByTestId("weight-chart").locator("canvas").waitFor();
    const vaccination = page.getByTestId("vaccination-form");
    await vaccination.locator('input[name="vaccine"]').fill("Felocell 4");
    await vaccination.locator('input[name="diseases"]').fill("panleukopenia, calicivirus");
    const nextYear = `${Number(today.slice(0, 4)) + 1}${today.slice(4)}`;
    await vaccination.locator('input[name="next_due_on"]').fill(nextYear);
    await vaccination.getByRole("button", { name: "Record vaccination" }).click();
    await page.getByTestId("timeline").locator('[data-kind="vaccination"]', { hasText: "Felocell 4" }).waitFor();
    await page.getByTestId("timeline").locator('[data-kind="note"]').waitFor();
    const patient = await api("GET", `/api/v1/patients/${luna.body.id}`);
    assert(patient.weight_grams === 4_300, `the patient's weight is not the latest weighing: ${patient.weight_grams}`);
  });

  await run.check("a prescription is written on the patient's page and cancelled with a reason", async () => {
    await page.goto(`${base}/#/patients/${luna.body.id}`);
    const form = page.getByTestId("prescription-form");
    await form.locator('input[name="drug"]').fill("Meloxicam 0,5 mg/ml");
    await form.locator('input[name="dose"]').fill("0,1 mg/kg");
    await form.locator('input[name="route"]').fill("oral");
    await form.locator('input[name="frequency"]').fill("cada 24 h");
    await form.locator('input[name="duration_days"]').fill("5");
    await form.getByRole("button", { name: "Prescribe" }).click();
    const row = page.getByTestId("prescriptions").locator('[data-status="active"]', { hasText: "Meloxicam 0,5 mg/ml" });
    await row.waitFor();
    await row.getByText("5 days").waitFor();
    await page.getByTestId("timeline").locator('[data-kind="prescription"]', { hasText: "Meloxicam 0,5 mg/ml" }).waitFor();
    await row.getByRole("button", { name: "Cancel prescription" }).click();
    await row.locator('input[name="cancel_reason"]').fill("Dosis mal calculada");
    await row.getByRole("button", { name: "Cancel prescription" }).click();
    const cancelled = page.getByTestId("prescriptions").locator('[data-status="cancelled"]', { hasText: "Dosis mal calculada" });
    await cancelled.waitFor();
    const id = await cancelled.getAttribute("data-prescription-id");
    const stored = await api("GET", `/api/v1/prescriptions/${id}`);
    assert(stored.status === "cancelled" && stored.cancel_reason === "Dosis mal calculada" && stored.drug === "Meloxicam 0,5 mg/ml" && stored.duration_days === 5, JSON.stringify(stored));
  });

  await run.check("the Due page: overdue and this week's vaccines; reception marks a reminder", async () => {
    const weekDay = new Date(Date.parse(`${today}T12:00:00Z`) + 3 * 86_400_000).toISOString().slice(0, 10);
    const lastYear = new Date(Date.now() - 370 * 86_400_000).toISOString();
    const overdueDay = new Date(Date.parse(`${today}T12:00:00Z`) - 5 * 86_400_000).toISOString().slice(0, 10);
    const rabies = await api("POST", `/api/v1/patients/${luna.body.id}/vaccinations`, { vaccine: "Nobivac Rabies", diseases: ["rabies"], given_at: lastYear, next_due_on: weekDay });
    const overdue = await api("POST", `/api/v1/patients/${luna.body.id}/vaccinations`, { vaccine: "Leucofeligen", diseases: ["feline-leukemia"], given_at: lastYear, next_due_on: overdueDay });
    await page.getByRole("link", { name: "Due" }).click();
    await page.getByTestId("due-week").locator(`[data-due-id="${rabies.id}"]`, { hasText: "Camila Rojas" }).waitFor();
    const row = page.getByTestId("due-overdue").locator(`[data-due-id="${overdue.id}"]`);
    await Promise.all([page.waitForResponse((r) => r.url().endsWith(`/vaccinations/${overdue.id}/reminder`) && r.ok()), row.locator('select[name="reminder_status"]').selectOption("contacted")]);
    const stored = await api("GET", `/api/v1/vaccinations/${overdue.id}`);
    assert(stored.reminder_status === "contacted", JSON.stringify(stored));
  });

  await run.check("create a tutor and a patient, then schedule a visit with accent-insensitive tutor search", async () => {
    await page.goto(`${base}/#/tutors`);
    await page.locator('input[name="name"]').fill("Ignacio Pérez");
    await page.locator('input[name="phone"]').fill("+56 9 8765 4321");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("heading", { level: 1, name: "Ignacio Pérez" }).waitFor();
    await page.locator('input[name="patient_name"]').fill("Toby");
    await page.locator('select[name="species"]').selectOption("dog");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("link", { name: "Toby" }).waitFor();
    await page.getByRole("link", { name: "Today" }).click();
    await page.locator('input[name="tutor"]').fill("perez");
    await page.getByRole("button", { name: "Ignacio Pérez" }).click();
    await page.getByRole("button", { name: "Toby" }).click();
    await page.locator('input[name="time"]').fill("15:30");
    await page.locator('input[name="reason"]').fill("Vacuna");
    await page.getByRole("button", { name: "Schedule a visit" }).last().click();
    await column(page, "scheduled").getByRole("link", { name: "Toby" }).waitFor();
    // A patient found by name alone (accents folded: "lúna" finds Luna).
    await page.locator('input[name="patient"]').fill("lúna");
    await page.getByRole("button", { name: "Luna" }).click();
    await page.locator('input[name="time"]').fill("17:00");
    await page.getByRole("button", { name: "Schedule a visit" }).last().click();
    await column(page, "scheduled").locator("time", { hasText: "17:00" }).waitFor();
    const tutors = await api("GET", "/api/v1/tutors?q=perez");
    const patients = await api("GET", `/api/v1/patients?tutor_id=${tutors.data[0].id}`);
    const visits = await api("GET", `/api/v1/visits?patient_id=${patients.data[0].id}`);
    assert(visits.data.length === 1 && Date.parse(visits.data[0].scheduled_at) === Date.parse(zonedInstant(today, "15:30")), `the visit is not at 15:30 Santiago: ${JSON.stringify(visits.data)}`);
  });

  await run.check("the Calendar shows a vet's visit on the day's grid with its length", async () => {
    const start = zonedInstant(today, "12:00");
    const booked = await api("POST", "/api/v1/visits", { patient_id: luna.body.id, vet_id: owner.body.user.id, scheduled_at: start, ends_at: new Date(Date.parse(start) + 45 * 60_000).toISOString() });
    await page.goto(`${base}/#/calendar`);
    await page.locator(`.calendar-grid [data-visit-id="${booked.id}"] .visit-length`, { hasText: "45 min" }).waitFor();
  });

  await run.check("invoice from the completed visit (live totals as the API computes them) → emit → pay with a double click → one payment → boleta", async () => {
    await page.goto(`${base}/#/today`);
    await page.locator(`[data-visit-id="${visit.body.id}"]`).getByRole("link", { name: "Invoice" }).click();
    await page.getByLabel("Unit price 1").fill("10001");
    await page.getByLabel("Quantity 1").fill("3");
    // 30,003 net; tax round_half_up(30,003 × 19 %) = 5,701 (5,700.57); total 35,704.
    await page.locator('[data-total="Tax"] dd', { hasText: "5,701" }).waitFor();
    await page.locator('[data-total="Total"] dd', { hasText: "35,704" }).waitFor();
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.waitForURL(/#\/invoices\/[0-9a-f-]{36}$/);
    invoiceUrl = page.url();
    await page.getByRole("button", { name: "Emit" }).click();
    const paymentKeys: (string | undefined)[] = [];
    page.on("request", (request) => request.method() === "POST" && request.url().endsWith("/billing/payments") && paymentKeys.push(request.headers()["idempotency-key"]));
    await page.getByRole("button", { name: "Record payment" }).dblclick();
    await page.locator(".badge.paid").waitFor();
    const invoiceId = invoiceUrl.split("/").pop()!;
    const payments = await api("GET", `/api/v1/billing/payments?invoice_id=${invoiceId}`);
    assert(payments.data.length === 1 && payments.data[0].amount === 35_704, `payments: ${JSON.stringify(payments.data)}`);
    assert(paymentKeys.length === 2 && paymentKeys[0] && paymentKeys[0] === paymentKeys[1], `the double click sent ${JSON.stringify(paymentKeys)}`);
    const stored = await api("GET", `/api/v1/billing/invoices/${invoiceId}`);
    assert(stored.status === "paid" && stored.visit_id === visit.body.id && stored.tax_amount === 5_701, JSON.stringify(stored));
    await page.getByRole("button", { name: "Issue boleta" }).click();
    await page.locator('[data-doc-type="39"]', { hasText: "Folio 1" }).waitFor();
  });

  await run.check("the owner refunds the payment: the boleta gets its nota de crédito and the invoice is credited", async () => {
    await page.goto(invoiceUrl);
    await page.getByRole("button", { name: "Refund" }).click();
    await page.locator("h1 .badge.credited").waitFor();
    const invoiceId = invoiceUrl.split("/").pop()!;
    const refunds = await api("GET", `/api/v1/billing/refunds?invoice_id=${invoiceId}`);
    const stored = await api("GET", `/api/v1/billing/invoices/${invoiceId}`);
    assert(refunds.data.length === 1 && refunds.data[0].amount === 35_704 && refunds.data[0].credit_note_id && stored.credited_amount === 35_704 && stored.balance === 0, `${JSON.stringify(refunds.data)} ${JSON.stringify(stored)}`);
  });

  await run.check("a factura with the receiver's RUT", async () => {
    const draft = await api("POST", "/api/v1/billing/invoices", { tutor_id: tutor.body.id, items: [{ description: "Cirugía", quantity: 1, unit_price: 120_000 }] });
    await api("POST", `/api/v1/billing/invoices/${draft.id}/emit`);
    await page.goto(`${base}/#/invoices/${draft.id}`);
    await page.locator('input[name="receiver_rut"]').fill("76086428-5");
    await page.locator('input[name="receiver_name"]').fill("Agrícola Los Aromos SpA");
    await page.locator('input[name="receiver_giro"]').fill("Agricultura");
    await page.locator('input[name="receiver_address"]').fill("Camino Real 45");
    await page.locator('input[name="receiver_commune"]').fill("Peñalolén");
    await page.getByRole("button", { name: "Issue factura" }).click();
    await page.locator('[data-doc-type="33"]', { hasText: "Folio 1" }).waitFor();
    const documents = await api("GET", `/api/v1/billing/sii/documents?invoice_id=${draft.id}`);
    assert(documents.data[0]?.receiver_rut === "76.086.428-5", JSON.stringify(documents.data));
  });

  await run.check("void an emitted invoice with a boleta: the button issues its nota de crédito with the void", async () => {
    const draft = await api("POST", "/api/v1/billing/invoices", { tutor_id: tutor.body.id, items: [{ description: "Control", quantity: 1, unit_price: 10_000 }] });
    await api("POST", `/api/v1/billing/invoices/${draft.id}/emit`);
    const boleta = await api("POST", "/api/v1/billing/sii/documents", { doc_type: 39, invoice_id: draft.id });
    await page.goto(`${base}/#/invoices/${draft.id}`);
    await page.getByRole("button", { name: /^Void/ }).click();
    await page.locator("h1 .badge.void").waitFor();
    const documents = await api("GET", `/api/v1/billing/sii/documents?invoice_id=${draft.id}`);
    const note = documents.data.find((doc: { doc_type: number }) => doc.doc_type === 61);
    assert(note?.referenced_document_id === boleta.id && note.reference_code === 1, JSON.stringify(documents.data));
  });

  await run.check("settings: the owner changes the clinic's legal name and adds a vet", async () => {
    await page.goto(`${base}/#/settings`);
    await page.locator('input[name="legal_name"]').fill("Servicios Veterinarios Los Aromos SpA");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    assert((await api("GET", "/api/v1/clinic")).legal_name === "Servicios Veterinarios Los Aromos SpA", "the legal name was not saved");
    await page.locator('input[name="user_name"]').fill("Ignacio Morales");
    await page.locator('input[name="user_email"]').fill("vet@aromos.cl");
    await page.locator('select[name="user_role"]').selectOption("vet");
    await page.locator('input[name="user_password"]').fill(PASSWORD);
    await page.getByRole("button", { name: "Add user" }).last().click();
    await page.getByRole("cell", { name: "vet@aromos.cl" }).waitFor();
  });

  await run.check("Activity filtered by a person and a record type, picked from lists: sentences with names, links and before → after", async () => {
    const desk = await call(base, "POST", "/api/v1/auth/login", { json: { email: "desk@aromos.cl", password: PASSWORD } });
    const rosa = await call(base, "POST", "/api/v1/tutors", { token: desk.body.access_token, json: { name: "Rosa Araya", phone: "+56 9 5555 0000" } });
    await call(base, "PATCH", `/api/v1/tutors/${rosa.body.id}`, { token: desk.body.access_token, json: { phone: "+56 9 5555 1111" } });
    await call(base, "POST", "/api/v1/patients", { token: desk.body.access_token, json: { tutor_id: rosa.body.id, name: "Pelusa", species: "cat" } });
    await page.goto(`${base}/#/activity`);
    const rows = page.getByTestId("activity").locator("tbody tr");
    await rows.first().waitFor();
    await page.locator('select[name="actor_id"]').selectOption({ label: "Andrea Torres" });
    await Promise.all([
      page.waitForResponse((r) => r.url().includes("/api/v1/audit?") && r.url().includes(`actor_id=${desk.body.user.id}`) && r.url().includes("entity_type=tutor")),
      page.locator('select[name="entity_type"]').selectOption("tutor"),
    ]);
    await rows.filter({ hasText: "Andrea Torres created the tutor Rosa Araya" }).waitFor();
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => `${tr.getAttribute("data-entity-type")}|${tr.children[1]?.textContent}`));
    assert(shown.length === 2 && shown.every((row) => row === "tutor|Andrea Torres"), `rows: ${JSON.stringify(shown)}`);
    const changed = rows.filter({ hasText: "Andrea Torres changed the tutor" });
    await changed.locator('[data-field="phone"]', { hasText: "+56 9 5555 0000 → +56 9 5555 1111" }).waitFor();
    await rows.filter({ hasText: "created the tutor" }).getByRole("link", { name: "tutor Rosa Araya" }).click();
    await page.getByRole("heading", { level: 1, name: "Rosa Araya" }).waitFor();
  });

  await run.check("a new clinic's first boleta: the refusal in Spanish names the missing issuer data and links to Settings", async () => {
    const fresh = await call(base, "POST", "/api/v1/auth/register", { json: { email: "nueva@clinica.cl", password: PASSWORD, name: "Marcela Vidal", clinic_name: "Clínica Nueva", timezone: "America/Santiago" } });
    const token = fresh.body.access_token;
    const someone = await call(base, "POST", "/api/v1/tutors", { token, json: { name: "Jorge Salas" } });
    const sale = await call(base, "POST", "/api/v1/billing/invoices", { token, json: { tutor_id: someone.body.id, items: [{ description: "Consulta", quantity: 1, unit_price: 35_000 }] } });
    await call(base, "POST", `/api/v1/billing/invoices/${sale.body.id}/emit`, { token });
    const spanish = await (await run.context({ viewport: TABLET, locale: "es-CL" })).newPage();
    spanish.on("pageerror", (error) => pageErrors.push(error.message));
    await signIn(spanish, "nueva@clinica.cl");
    await spanish.goto(`${base}/#/invoices/${sale.body.id}`);
    await spanish.getByRole("heading", { level: 1, name: /Venta/ }).waitFor();
    await spanish.getByTestId("sale-heading").getByText("Jorge Salas").waitFor();
    await spanish.getByRole("button", { name: "Emitir boleta" }).click();
    const refusal = spanish.locator(".notice.error");
    await refusal.waitFor();
    const text = await refusal.innerText();
    assert(text.includes("Antes de emitir documentos del SII, completa el RUT, la razón social, el giro y el código de actividad económica (Acteco) de la clínica."), `refusal: ${text}`);
    assert(!/PATCH|legal_name|economic_activity_code|Set the clinic/.test(text), `the refusal speaks API: ${text}`);
    await refusal.getByRole("link", { name: "Ir a Ajustes" }).click();
    await spanish.locator('input[name="legal_name"]').waitFor();
    assert(spanish.url().endsWith("#/settings"), spanish.url());
  });

  await run.check("create an MCP key, call get_clinic_context with it, see the call in the usage charts' data, revoke it", async () => {
    await page.goto(`${base}/#/mcp`);
    await page.locator('input[name="key_name"]').fill("Asistente");
    await page.getByRole("button", { name: "Create" }).click();
    const apiKey = (await page.getByTestId("new-api-key").innerText()).trim();
    assert(/^svc_[A-Za-z0-9]{32}$/.test(apiKey), `shown key: ${apiKey}`);
    const config = JSON.parse(await page.getByTestId("claude-config").innerText());
    const entry = config.mcpServers["vet-clinic"];
    assert(entry.args.includes(`${base}/mcp`) && entry.env.VET_CLINIC_KEY === `Bearer ${apiKey}`, JSON.stringify(config));
    const invoked = await fetch(`${base}/mcp/tools/get_clinic_context/invoke`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: "{}" });
    assert(invoked.status === 200, `invoke: ${invoked.status} ${await invoked.text()}`);
    await page.reload();
    const utcToday = new Date().toISOString().slice(0, 10);
    await page.locator(`[data-testid="usage-per-day"] tr[data-date="${utcToday}"] td[data-outcome="ok"]`, { hasText: "1" }).waitFor({ state: "attached" });
    await page.locator('[data-testid="usage-by-tool"] li[data-tool="get_clinic_context"]').waitFor();
    await page.locator('[data-testid="latest-calls"] td', { hasText: "get_clinic_context" }).first().waitFor();
    await page.locator("canvas").first().waitFor();
    await page.getByRole("button", { name: "Revoke Asistente" }).click();
    await page.locator(`tr[data-key-prefix="${apiKey.slice(0, 8)}"] .badge`, { hasText: "Revoked" }).waitFor();
    const refused = await fetch(`${base}/mcp/tools/get_clinic_context/invoke`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: "{}" });
    assert(refused.status === 401, `a revoked key answered ${refused.status}`);
  });

  await run.check("an ended session sends the user to sign in over the page, and what they typed is kept and saved", async () => {
    await page.goto(`${base}/#/tutors`);
    await page.locator('input[name="name"]').fill("Valentina Soto");
    // Every other session of the owner ends (password change), and the next call finds the
    // access token refused: the console must refresh, fail, and ask to sign in again.
    await call(base, "POST", "/api/v1/auth/password", { token: ownerToken, json: { current_password: PASSWORD, new_password: `${PASSWORD} 2` } });
    await page.route("**/api/v1/tutors", (route) => route.fulfill({ status: 401, contentType: "application/json", body: '{"error":"token_expired","code":"TOKEN_EXPIRED","message":"expired","request_id":"x"}' }), { times: 1 });
    await page.getByRole("button", { name: "Create" }).click();
    await page.locator(".overlay").waitFor();
    assert((await page.locator('main input[name="name"]').inputValue()) === "Valentina Soto", "the typed name was lost");
    await page.locator('.overlay input[name="password"]').fill(`${PASSWORD} 2`);
    await page.locator('.overlay button[type="submit"]').click();
    await page.getByRole("heading", { level: 1, name: "Valentina Soto" }).waitFor();
  });

  await run.check("Spanish follows the switch; money is CLP without decimals, in es-CL", async () => {
    await page.goto(invoiceUrl);
    await page.getByLabel("Language").selectOption("es");
    await page.getByRole("link", { name: "Hoy" }).waitFor();
    await page.locator('[data-total="Total"] dd', { hasText: "$35.704" }).waitFor();
    await page.getByLabel("Idioma").selectOption("en");
  });

  await run.check("no serious or critical accessibility violation on any page (axe)", async () => {
    const problems: string[] = [];
    for (const hash of ["#/today", "#/tutors", `#/tutors/${tutor.body.id}`, `#/patients/${luna.body.id}`, `#/visits/${visit.body.id}`, "#/due", "#/billing", new URL(invoiceUrl).hash, "#/mcp", "#/settings"]) {
      await page.goto(`${base}/${hash}`);
      await page.locator("main h1").first().waitFor();
      await page.waitForLoadState("networkidle");
      problems.push(...(await axeScan(page, hash)));
    }
    const fresh = await (await run.context({ viewport: TABLET })).newPage();
    await fresh.goto(`${base}/`);
    await fresh.locator('input[name="email"]').waitFor();
    problems.push(...(await axeScan(fresh, "sign-in")));
    assert(problems.length === 0, problems.join("\n"));
  });

  await run.check("sign-out ends the session: a reload shows sign-in", async () => {
    await page.goto(`${base}/#/today`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator('input[name="email"]').waitFor();
    await page.reload();
    await page.locator('input[name="email"]').waitFor();
  });

  await run.check("staff see neither the MCP page nor settings", async () => {
    const desk = await (await run.context({ viewport: TABLET, locale: "en-US" })).newPage();
    await signIn(desk, "desk@aromos.cl");
    const links = await desk.locator("header nav a").allInnerTexts();
    assert(!links.some((l) => /MCP|Settings/.test(l)), `staff navigation: ${links.join(", ")}`);
    for (const hash of ["#/mcp", "#/settings"]) {
      await desk.goto(`${base}/${hash}`);
      await desk.getByRole("alert").filter({ hasText: "owner" }).waitFor();
      assert((await desk.locator("table").count()) === 0, `${hash} shows data to staff`);
    }
  });

  await run.check("Firefox: sign in, today's board, an invoice's live totals, the MCP charts; no script error, no foreign request", async () => {
    assert(existsSync(FIREFOX_PATH), `Firefox is not installed at ${FIREFOX_PATH} (Debian package firefox-esr)`);
    const firefox = await Firefox.launch();
    try {
      const fill = (selector: string, value: string) =>
        firefox.evaluate(`(() => { const el = document.querySelector(${JSON.stringify(selector)}); el.value = ${JSON.stringify(value)}; el.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`);
      await firefox.goto(`${base}/`);
      await firefox.waitFor(`document.querySelector('input[name="email"]')`);
      await fill('input[name="email"]', "owner@aromos.cl");
      await fill('input[name="password"]', `${PASSWORD} 2`);
      await firefox.evaluate(`document.querySelector('button[type="submit"]').click()`);
      await firefox.waitFor(`document.querySelector('.board[aria-busy="false"] [data-visit-id="${visit.body.id}"]')`);
      await firefox.evaluate(`location.hash = "#/invoices/new?tutor=${tutor.body.id}"`);
      await firefox.waitFor(`document.querySelector('input[name="unit_price"]')`);
      await fill('input[name="unit_price"]', "10001");
      await fill('input[name="quantity"]', "3");
      await firefox.waitFor(`/5[.,]701/.test(document.querySelector('[data-total] + [data-total] dd')?.textContent ?? "")`);
      await firefox.evaluate(`location.hash = "#/mcp"`);
      await firefox.waitFor(`document.querySelector("canvas") && document.querySelector('[data-testid="usage-by-tool"] li')`);
      assert(firefox.errors.length === 0, `script errors in Firefox: ${firefox.errors.join("\n")}`);
      assert(firefox.foreign.length === 0, `Firefox requests left 127.0.0.1: ${firefox.foreign.join(", ")}`);
    } finally {
      await firefox.close();
    }
  });

  const demo = await startDemoServer();
  try {
    const pages = await languagePages(demo.base, demo.owner);
    for (const [language, locale] of [["es", "es-CL"], ["en", "en-US"]] as const) {
      await run.check(`Chromium, ${language}: every console page of the demo clinic speaks ${language} only (no key, no raw value, no word of the other language)`, async () => {
        const context = await run.context({ viewport: TABLET, locale });
        const tab = await context.newPage();
        tab.on("pageerror", (error) => pageErrors.push(error.message));
        const problems: string[] = [];
        await tab.goto(`${demo.base}/`);
        await tab.locator('input[name="email"]').waitFor();
        problems.push(...languageProblems(language, "sign-in", JSON.parse(String(await tab.evaluate(`(${collectTexts})()`)))));
        await tab.locator('input[name="email"]').fill(demo.owner.email);
        await tab.locator('input[name="password"]').fill(demo.owner.password);
        await tab.locator('button[type="submit"]').click();
        await tab.locator(".board[aria-busy=false]").waitFor();
        for (const hash of pages) {
          await tab.goto(`${demo.base}/${hash}`);
          await tab.locator("main h1").first().waitFor();
          assert(await tab.evaluate(settled()), `${hash} did not settle`);
          problems.push(...languageProblems(language, hash.split("?")[0]!, JSON.parse(String(await tab.evaluate(`(${collectTexts})()`)))));
        }
        assert(problems.length === 0, problems.join("\n"));
        await context.close();
      });
    }

    await run.check("a receptionist on a visit whose note is still a draft is told why it is not shown", async () => {
      const desk = demoLogin(demo, "staff");
      const owner = (await call(demo.base, "POST", "/api/v1/auth/login", { json: demo.owner })).body.access_token;
      const board = await call(demo.base, "GET", `/api/v1/operations/visits?status=completed&limit=200&date_from=${daysAgo(3)}&date_to=${daysAgo(0)}`, { token: owner });
      const drafted = board.body.data.find((v: { needs_signed_note: boolean }) => v.needs_signed_note);
      assert(drafted, "the demo has no completed visit with only a draft note in the last days");
      const tab = await (await run.context({ viewport: TABLET, locale: "es-CL" })).newPage();
      await signIn(tab, desk.email, desk.password, demo.base);
      await tab.goto(`${demo.base}/#/visits/${drafted.id}`);
      const why = tab.getByTestId("note-not-visible");
      await why.waitFor();
      assert((await why.innerText()).includes("borrador"), await why.innerText());
      await tab.getByRole("link", { name: drafted.patient.name }).waitFor();
    });

    await run.check("Firefox: every console page of the demo clinic in Spanish and in English, no key, no raw value, no word of the other language", async () => {
      assert(existsSync(FIREFOX_PATH), `Firefox is not installed at ${FIREFOX_PATH} (Debian package firefox-esr)`);
      const firefox = await Firefox.launch();
      try {
        const fill = (selector: string, value: string) =>
          firefox.evaluate(`(() => { const el = document.querySelector(${JSON.stringify(selector)}); el.value = ${JSON.stringify(value)}; el.dispatchEvent(new Event("input", { bubbles: true })); return true; })()`);
        await firefox.goto(`${demo.base}/`);
        await firefox.waitFor(`document.querySelector('input[name="email"]')`);
        await fill('input[name="email"]', demo.owner.email);
        await fill('input[name="password"]', demo.owner.password);
        await firefox.evaluate(`document.querySelector('button[type="submit"]').click()`);
        await firefox.waitFor(`document.querySelector('.board[aria-busy="false"]')`);
        const problems: string[] = [];
        for (const language of ["es", "en"] as const) {
          await firefox.evaluate(`(() => { const s = document.querySelector("header select"); s.value = "${language}"; s.dispatchEvent(new Event("change", { bubbles: true })); return true; })()`);
          // Start from a page that is not the first one read (its heading would be the same element).
          await firefox.evaluate(`location.hash = "#/billing"`);
          assert(await firefox.evaluate<boolean>(settled(`location.hash === "#/billing"`)), "the sales page did not settle in Firefox");
          for (const hash of pages) {
            // The next page's heading is a new element: the last page's text is never read as this one's.
            await firefox.evaluate(`(() => { window.lastHeading = document.querySelector("main h1"); location.hash = ${JSON.stringify(hash)}; return true; })()`);
            assert(await firefox.evaluate<boolean>(settled(`document.querySelector("main h1") !== window.lastHeading && document.documentElement.lang === "${language === "es" ? "es-CL" : "en"}"`)), `${hash} did not settle in Firefox`);
            problems.push(...languageProblems(language, `firefox ${hash.split("?")[0]}`, JSON.parse(await firefox.evaluate<string>(`(${collectTexts})()`))));
          }
        }
        assert(problems.length === 0, problems.join("\n"));
        assert(firefox.errors.length === 0, `script errors in Firefox: ${firefox.errors.join("\n")}`);
      } finally {
        await firefox.close();
      }
    });
  } finally {
    await demo.stop();
  }

  await run.check("no script error, nothing refused by the page's Content-Security-Policy, and no request left 127.0.0.1", async () => {
    assert(pageErrors.length === 0, pageErrors.join("\n"));
    assert(policyRefusals.length === 0, policyRefusals.join("\n"));
    assert(run.foreign.length === 0, run.foreign.join(", "));
  });
} finally {
  const code = await run.finish();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(code);
}

