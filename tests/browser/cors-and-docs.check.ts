/**
 * What only a real browser can show, in headless Chromium (Debian's `chromium`, or CHROMIUM_PATH):
 * 1. /docs renders every operation and a request body offline (no request leaves 127.0.0.1);
 * 2. a web app on another origin listed in CORS_ORIGINS can log in (the refresh cookie included)
 *    and list tutors, and one on an unlisted origin is blocked by the browser.
 * `bun run test:browser` (with the console's checks); `.ci/run` runs it.
 */
import { listenerOptions } from "../../src/app";
import { createTestApp, testConfig } from "../helpers/app";
import { BrowserRun } from "./harness";

const ALLOWED_PORT_PLACEHOLDER = "__API__";

// A tiny "clinic web app" page on its own origin, calling the API across origins.
const APP_PAGE = `<!doctype html><meta charset="utf-8"><title>desk</title><pre id="out">…</pre><script>
(async () => {
  const api = "${ALLOWED_PORT_PLACEHOLDER}";
  try {
    const reg = await fetch(api + "/api/v1/auth/register", { method: "POST", credentials: "include", headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "desk" + Date.now() + "@clinic.test", password: "a long password", name: "Desk", clinic_name: "Desk Clinic" }) });
    const session = await reg.json();
    await fetch(api + "/api/v1/tutors", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + session.access_token }, body: JSON.stringify({ name: "Camila Rojas" }) });
    const list = await fetch(api + "/api/v1/tutors", { headers: { authorization: "Bearer " + session.access_token } });
    const body = await list.json();
    document.getElementById("out").textContent = "OK " + list.status + " " + body.data.map((t) => t.name).join(",") + " id=" + list.headers.get("x-request-id");
  } catch (e) { document.getElementById("out").textContent = "BLOCKED " + e; }
})();
</script>`;

/** Runs in the page: the app wrote its outcome. (A string, so the type check needs no DOM types.) */
const PAGE_DONE = `!document.getElementById("out").textContent.startsWith("…")`;

const t = await createTestApp({ config: { corsOrigins: [] } });
const api = t.app.listen(listenerOptions(testConfig({ port: 0 })));
const apiBase = `http://127.0.0.1:${api.server!.port}`;
const appSite = () => Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(APP_PAGE.replace(ALLOWED_PORT_PLACEHOLDER, apiBase), { headers: { "content-type": "text/html" } }) });
const allowedSite = appSite();
const otherSite = appSite();
// The listed origin is known only now that its port is: the config object is the app's own.
t.context.config.corsOrigins.push(`http://127.0.0.1:${allowedSite.port}`);

const run = await BrowserRun.launch();
let code = 1;
try {
  const context = await run.context();

  await run.check("/docs renders every operation and the request bodies, offline", async () => {
    const tab = await context.newPage();
    // Swagger UI draws a tag's operations once the tag scrolls into view: a page tall enough for
    // the whole document shows them all at once.
    await tab.setViewportSize({ width: 1280, height: 60_000 });
    await tab.goto(`${apiBase}/docs`);
    await tab.waitForSelector(".opblock", { timeout: 15_000 });
    const documented = Object.values((t.context.apiDocument.json as { paths: Record<string, object> }).paths).reduce((n, item) => n + Object.keys(item).length, 0);
    const shown = await tab.locator(".opblock").count();
    if (shown !== documented) throw new Error(`Swagger UI shows ${shown} operations; the document has ${documented}`);
    await tab.locator("#operations-tutors-postTutors").click();
    await tab.waitForSelector("#operations-tutors-postTutors .microlight", { timeout: 10_000 });
    if (!(await tab.locator("#operations-tutors-postTutors").innerText()).includes('"name"')) throw new Error("POST /api/v1/tutors shows no body example");
    await tab.close();
  });

  await run.check("a web app on a CORS_ORIGINS origin logs in and lists tutors across origins", async () => {
    const tab = await context.newPage();
    await tab.goto(`http://127.0.0.1:${allowedSite.port}/`);
    await tab.waitForFunction(PAGE_DONE, undefined, { timeout: 15_000 });
    const text = await tab.locator("#out").innerText();
    if (!/^OK 200 Camila Rojas id=\S+/.test(text)) throw new Error(`the page says: ${text}`);
    await tab.close();
  });

  await run.check("the same app on an unlisted origin is blocked by the browser", async () => {
    const tab = await context.newPage();
    await tab.goto(`http://127.0.0.1:${otherSite.port}/`);
    await tab.waitForFunction(PAGE_DONE, undefined, { timeout: 15_000 });
    const text = await tab.locator("#out").innerText();
    if (!text.startsWith("BLOCKED")) throw new Error(`the page says: ${text}`);
    await tab.close();
  });

  await run.check("no request left 127.0.0.1", async () => {
    if (run.foreign.length) throw new Error(run.foreign.join(", "));
  });
} finally {
  code = await run.finish();
  allowedSite.stop(true);
  otherSite.stop(true);
  await t.app.stop(true);
  await t.close();
}
process.exit(code);
