/**
 * The first run and the clinic's LAN in a real browser (`bun run test:browser`): a server on an
 * empty data directory prints its setup link; Chromium completes setup through it and lands on
 * the board; then a console reached as http://192.168.1.20:3000 (the usual back-office box) stays
 * signed in across a reload and an expired access token. That address never sees traffic: the
 * browser's proxy is a listener on 127.0.0.1 that hands every request to the server on 127.0.0.1,
 * keeping the Host header the browser sent.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { SignJWT } from "jose";
import type { Page } from "playwright-core";
import { call, startServer } from "../helpers/server-process";
import { assert, BrowserRun } from "./harness";

const PASSWORD = "a long password";
const LAN = "192.168.1.20:3000";
const JWT_SECRET = "process-test-secret-of-at-least-32-bytes!";

/** Serious or critical accessibility violations on the page as it stands. */
async function accessibilityProblems(page: Page, where: string): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${where}: ${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}
const problems: string[] = [];

const run = await BrowserRun.launch();
const dataDir = mkdtempSync(join(tmpdir(), "vet-setup-"));
// The defaults a clinic installing it gets: registration closed, COOKIE_SECURE=auto.
const server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: "warn", REGISTRATION: "closed", COOKIE_SECURE: "auto", JWT_SECRET });
const base = server.baseUrl.replace("localhost", "127.0.0.1");
const port = new URL(base).port;

const printed = server.lines.map((line) => { try { return JSON.parse(line) as Record<string, unknown>; } catch { return {}; } }).find((line) => typeof line.setup_url === "string");
const setupUrl = String(printed?.setup_url ?? "").replace("localhost", "127.0.0.1");

/** The LAN: what the browser sends to 192.168.1.20:3000 goes to the server on loopback, Host kept. */
type Seen = { method: string; path: string; status: number };
const seen: Seen[] = [];
const waiters: { match: (r: Seen) => boolean; resolve: () => void }[] = [];
/** Resolves once the proxy has answered a request that matches (from index `from` of `seen`). */
const proxied = (from: number, match: (r: Seen) => boolean) =>
  seen.slice(from).some(match) ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ match, resolve }));
let expireNextApiCall: string | null = null;
const lanProxy = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    if (url.host !== LAN) return new Response("only the LAN address is proxied", { status: 502 });
    const headers = new Headers(request.headers);
    headers.set("host", LAN);
    // An access token past its 15 minutes, as a console left open meets it.
    if (expireNextApiCall && headers.get("authorization") && url.pathname.startsWith("/api/v1/") && !url.pathname.startsWith("/api/v1/auth/")) {
      headers.set("authorization", `Bearer ${expireNextApiCall}`);
      expireNextApiCall = null;
    }
    const answer = await fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, { method: request.method, headers, body: request.body, redirect: "manual" });
    const entry = { method: request.method, path: url.pathname, status: answer.status };
    seen.push(entry);
    for (const waiter of waiters.splice(0)) (waiter.match(entry) ? waiter.resolve() : waiters.push(waiter));
    const out = new Headers(answer.headers);
    out.delete("content-encoding");
    out.delete("content-length");
    return new Response(answer.body, { status: answer.status, headers: out });
  },
});

try {
  await run.check("an empty install prints a setup link; the sign-in page says how to get it", async () => {
    assert(/^http:\/\/127\.0\.0\.1:\d+\/setup#[\w-]{40,}$/.test(setupUrl), `no setup link printed: ${server.lines.join("\n")}`);
    const context = await run.context();
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByTestId("no-user-yet").waitFor();
    assert((await page.getByTestId("no-user-yet").textContent())!.includes("setup_url"), "the hint names the setup_url line");
    problems.push(...(await accessibilityProblems(page, "sign-in with the hint")));
    await page.goto(`${base}/setup`);
    await page.getByRole("alert").waitFor();
    await context.close();
  });

  await run.check("the setup page creates the clinic and its owner (an administrator) and lands on the board", async () => {
    const context = await run.context();
    const page = await context.newPage();
    await page.goto(setupUrl);
    await page.locator('input[name="clinic_name"]').waitFor();
    problems.push(...(await accessibilityProblems(page, "setup")));
    await page.locator('input[name="clinic_name"]').fill("Clínica Los Aromos");
    assert((await page.locator('input[name="timezone"]').inputValue()) === "America/Santiago", "the time zone defaults to America/Santiago");
    await page.locator('input[name="name"]').fill("Carolina Fuentes");
    await page.locator('input[name="email"]').fill("owner@aromos.cl");
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.locator('button[type="submit"]').click();
    await page.locator(".board[aria-busy=false]").waitFor();
    assert(new URL(page.url()).pathname === "/" && !page.url().includes("setup"), `the spent link left the address bar: ${page.url()}`);
    await page.locator('nav a[href="#/install"]').waitFor();
    await page.locator('nav a[href="#/install"]').click();
    await page.getByTestId("registration").waitFor();
    problems.push(...(await accessibilityProblems(page, "install")));
    // The link is spent: opened again, it creates nothing.
    const again = await call(base, "POST", "/api/v1/auth/setup", { json: { token: new URL(setupUrl).hash.slice(1), clinic_name: "X", name: "X", email: "x@x.cl", password: PASSWORD } });
    assert(again.status === 403, `the setup link worked twice: ${again.status}`);
    const squat = await call(base, "POST", "/api/v1/auth/register", { json: { clinic_name: "X", name: "X", email: "x@x.cl", password: PASSWORD } });
    assert(squat.status === 403 && squat.body.code === "REGISTRATION_CLOSED", `registration is open: ${squat.text}`);
    await context.close();
  });

  await run.check("at http://192.168.1.20:3000 the console stays signed in across a reload and an expired access token", async () => {
    const context = await run.browser.newContext({ proxy: { server: `http://127.0.0.1:${lanProxy.port}` } });
    try {
      const page = await context.newPage();
      await page.goto(`http://${LAN}/#/today`);
      await page.locator('input[name="email"]').fill("owner@aromos.cl");
      await page.locator('input[name="password"]').fill(PASSWORD);
      await page.locator('button[type="submit"]').click();
      await page.locator(".board[aria-busy=false]").waitFor();
      const [cookie] = (await context.cookies(`http://${LAN}/api/v1/auth/refresh`)).filter((c) => c.name === "service_refresh");
      assert(cookie && !cookie.secure && cookie.httpOnly && cookie.sameSite === "Strict", `the refresh cookie over plain http: ${JSON.stringify(cookie)}`);

      await page.reload();
      await page.locator(".board[aria-busy=false]").waitFor();
      assert((await page.locator('input[name="password"]').count()) === 0, "the reload asked to sign in again");

      const me = (await call(base, "POST", "/api/v1/auth/login", { json: { email: "owner@aromos.cl", password: PASSWORD } })).body;
      expireNextApiCall = await new SignJWT({ clinic_id: me.clinic.id, role: "owner" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(me.user.id)
        .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
        .sign(new TextEncoder().encode(JWT_SECRET));
      const before = seen.length;
      await page.locator('nav a[href="#/tutors"]').click();
      await proxied(before, (r) => r.path.startsWith("/api/v1/tutors") && r.status === 200);
      const after = seen.slice(before);
      const expired = after.findIndex((r) => r.status === 401);
      assert(expired >= 0, `no expired-token answer reached the console: ${JSON.stringify(after)}`);
      const refresh = after.slice(expired).find((r) => r.path === "/api/v1/auth/refresh");
      assert(refresh?.status === 200, `the refresh after expiry: ${JSON.stringify(after)}`);
      assert(after.slice(expired + 1).some((r) => r.path.startsWith("/api/v1/tutors") && r.status === 200), `the call was not retried: ${JSON.stringify(after)}`);
      assert((await page.locator(".overlay").count()) === 0, "the console asked to sign in again");
    } finally {
      await context.close();
    }
  });
  await run.check("no serious or critical accessibility violation on the sign-in hint, setup and install pages (axe)", async () => {
    assert(problems.length === 0, problems.join("\n"));
  });
} finally {
  lanProxy.stop(true);
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(await run.finish());
