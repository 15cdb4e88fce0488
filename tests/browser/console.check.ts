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

async function signIn(page: Page, email: string, password = PASSWORD) {
  await page.goto(`${base}/#/today`);
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
    await column(page, "scheduled").locator("time", { hasText: "5:00" }).waitFor();
    const tutors = await api("GET", "/api/v1/tutors?q=perez");
    const patients = await api("GET", `/api/v1/patients?tutor_id=${tutors.data[0].id}`);
    const visits = await api("GET", `/api/v1/visits?patient_id=${patients.data[0].id}`);
    assert(visits.data.length === 1 && Date.parse(visits.data[0].scheduled_at) === Date.parse(zonedInstant(today, "15:30")), `the visit is not at 15:30 Santiago: ${JSON.stringify(visits.data)}`);
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
