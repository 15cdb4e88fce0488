/**
 * A tutor books online in a real browser (`bun run test:browser`), on a phone-sized page against a
 * spawned server on the embedded database: the clinic's page at /book/{slug}, a type, a day, a
 * slot, the form with the consent boxes, booked; then the manage link moves it and cancels it.
 */
import AxeBuilder from "@axe-core/playwright";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { call, startServer } from "../helpers/server-process";
import { assert, BrowserRun } from "./harness";

const PASSWORD = "a long password";
const PHONE = { width: 390, height: 844 };

const run = await BrowserRun.launch();
const dataDir = mkdtempSync(join(tmpdir(), "vet-booking-"));
const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn" });
const base = server.baseUrl.replace("localhost", "127.0.0.1");

// The clinic: a vet, a type taken online, a public slug.
const owner = await call(base, "POST", "/api/v1/auth/register", { json: { email: "owner@aromos.cl", password: PASSWORD, name: "Carolina Fuentes", clinic_name: "Los Aromos", timezone: "America/Santiago" } });
const token: string = owner.body.access_token;
const api = async (method: string, path: string, json?: unknown) => {
  const r = await call(base, method, path, { token, json });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.text}`);
  return r.body;
};
const vet = await api("POST", "/api/v1/users", { email: "vet@aromos.cl", password: PASSWORD, name: "Tomás Vera", role: "vet" });
const type = await api("POST", "/api/v1/appointment-types", { name: "Consulta general", duration_minutes: 30, vet_ids: [vet.id], bookable_online: true, species: ["dog", "cat"] });
await api("PATCH", "/api/v1/clinic/calendar-settings", { slug: "los-aromos" });
// A weekday at least two days ahead, in Santiago: inside the default opening hours and the default cancellation window.
let day = new Date(Date.now() + 2 * 86_400_000);
while ([0, 6].includes(day.getUTCDay())) day = new Date(day.getTime() + 86_400_000);
const bookingDay = day.toISOString().slice(0, 10);

const problems: string[] = [];
async function accessibilityProblems(page: Page, where: string): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${where}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

try {
  const context = await run.context({ viewport: PHONE, isMobile: true, hasTouch: true, locale: "es-CL" });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  const policyRefusals: string[] = [];
  page.on("console", (message) => void (/Content Security Policy/i.test(message.text()) && policyRefusals.push(message.text())));
  let manageUrl = "";

  await run.check("the booking page: pick a type, a day and a slot, fill in the tutor and the pet, tick a consent, booked", async () => {
    await page.goto(`${base}/book/los-aromos`);
    await page.getByRole("heading", { name: "Reservar hora en Los Aromos" }).waitFor();
    assert((await page.evaluate("document.documentElement.lang")) === "es-CL", "the page says it is Spanish");
    assert((await page.getByTestId("type").inputValue()) === type.id, "the type taken online is offered");
    await page.getByTestId("day").fill(bookingDay);
    await page.locator(`[data-day="${bookingDay}"]`).waitFor();
    const first = (await page.getByTestId("slot").first().textContent())!.trim();
    assert(first === "09:00", `the day's first slot is 09:00 in Santiago (got ${first})`);
    // Nothing wider than the phone.
    const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    assert(overflow <= 0, `the page scrolls sideways by ${overflow}px on a phone`);
    await page.getByTestId("slot").nth(2).click();
    const form = page.getByTestId("booking-form");
    await form.getByRole("textbox", { name: "Nombre y apellido" }).fill("Camila Rojas");
    await form.getByRole("textbox", { name: "Teléfono (con +56)" }).fill("+56912345678");
    await form.getByRole("textbox", { name: "Correo electrónico" }).fill("camila@example.cl");
    await form.getByRole("textbox", { name: "Nombre", exact: true }).fill("Luna");
    await form.getByLabel("Especie").selectOption("cat");
    await page.getByTestId("consent-email").check();
    problems.push(...(await accessibilityProblems(page, "booking form")));
    await page.getByTestId("book").click();
    await page.getByRole("heading", { name: "¡Reserva recibida!" }).waitFor();
    assert((await page.getByTestId("booking-status").textContent())!.includes("Solicitada"), "the booking awaits the clinic");
    assert((await page.getByTestId("booking-when").textContent())!.includes("10:00"), "the summary shows 10:00 local");
    manageUrl = (await page.getByTestId("manage-link").getAttribute("href"))!;
    assert(/^\/book\/los-aromos\/manage#[\w-]+\.\d+\.[\w-]+$/.test(manageUrl), `the manage link carries its token in the fragment: ${manageUrl}`);

    // The clinic sees a requested visit with the vet, and the consent with the form's wording.
    const visits = await api("GET", `/api/v1/visits?status=requested`);
    assert(visits.data.length === 1 && visits.data[0].vet_id === vet.id, `one requested visit: ${JSON.stringify(visits.data)}`);
    const tutors = await api("GET", "/api/v1/tutors");
    const consents = await api("GET", `/api/v1/tutors/${tutors.data[0].id}/consents`);
    assert(consents.history.length === 1 && consents.history[0].source === "booking" && consents.history[0].channel === "email", JSON.stringify(consents.history));
  });

  await run.check("the manage link moves the booking to another offered time, and keeps the new link", async () => {
    await page.goto(`${base}${manageUrl}`);
    await page.getByTestId("booking-summary").waitFor();
    await page.getByTestId("move-start").click();
    await page.getByTestId("move-slot").first().waitFor();
    problems.push(...(await accessibilityProblems(page, "move view")));
    const offered = (await page.getByTestId("move-slot").first().textContent())!.trim();
    assert(offered === "09:00", `the first other time that day is 09:00 (got ${offered})`);
    await page.getByTestId("move-slot").first().click();
    await page.getByTestId("booking-when").filter({ hasText: "09:00" }).waitFor();
    const moved = new URL(page.url());
    assert(`${moved.pathname}${moved.hash}` !== manageUrl, "the page holds the new link the move answered");
    manageUrl = `${moved.pathname}${moved.hash}`;
    const visits = await api("GET", `/api/v1/visits?status=requested`);
    const local = (iso: string) => new Intl.DateTimeFormat("en-GB", { timeZone: "America/Santiago", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(iso));
    assert(visits.data.length === 1 && local(visits.data[0].scheduled_at) === "09:00", `the visit moved to 09:00 in Santiago: ${JSON.stringify(visits.data)}`);
  });

  await run.check("the manage link shows the booking and cancels it; the slot is free again", async () => {
    await page.goto(`${base}${manageUrl}`);
    await page.getByTestId("booking-summary").waitFor();
    problems.push(...(await accessibilityProblems(page, "manage view")));
    await page.getByTestId("cancel").click();
    await page.getByTestId("confirm-cancel").click();
    await page.getByTestId("cancelled").waitFor();
    assert((await page.getByTestId("booking-status").textContent())!.includes("Cancelada"), "the status reads Cancelada");
    const visits = await api("GET", `/api/v1/visits?status=cancelled`);
    assert(visits.data.length === 1, "the visit is cancelled");
    const events = await api("GET", `/api/v1/audit?entity_type=visit&entity_id=${visits.data[0].id}`);
    assert(JSON.stringify(events).includes("tutor (booking link)"), `the cancellation is the tutor's, in the audit trail: ${JSON.stringify(events).slice(0, 500)}`);
    // Reloading the booking page offers the slot again.
    await page.goto(`${base}/book/los-aromos`);
    await page.getByTestId("day").fill(bookingDay);
    await page.locator(`[data-day="${bookingDay}"]`).waitFor();
    assert((await page.getByTestId("slot").nth(2).textContent())!.trim() === "10:00", "10:00 is offered again");
  });

  await run.check("a forged manage link says so in Spanish", async () => {
    await page.goto(`${base}/book/los-aromos/manage#forged`);
    await page.getByRole("alert").waitFor();
    assert((await page.getByRole("alert").textContent())!.includes("no es válido"), "the refusal is explained");
  });

  await run.check("no accessibility violations, script errors or Content-Security-Policy refusals, and no request left 127.0.0.1", async () => {
    assert(problems.length === 0, problems.join("\n"));
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
