/**
 * Opens /docs in headless Chromium (Debian's `chromium`) against an in-process server with an
 * in-memory database, checks that Swagger UI renders every operation and a request body with
 * its example, that no request leaves 127.0.0.1, and saves a screenshot:
 * `bun scripts/docs-screenshot.ts [out.png]` (default docs/api-docs.png).
 */
import { chromium } from "playwright-core";
import { listenerOptions } from "../src/app";
import { createTestApp, testConfig } from "../tests/helpers/app";

const out = process.argv[2] ?? "docs/api-docs.png";
const t = await createTestApp();
t.app.listen(listenerOptions(testConfig({ port: 0 })));
const base = `http://127.0.0.1:${t.app.server!.port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const foreign: string[] = [];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  page.on("request", (request) => {
    const host = new URL(request.url()).hostname;
    if (host !== "127.0.0.1" && !request.url().startsWith("data:")) foreign.push(request.url());
  });
  await page.goto(`${base}/docs`);
  await page.waitForSelector(".opblock", { timeout: 15_000 });
  const operations = await page.locator(".opblock").count();
  const documented = Object.values((t.context.apiDocument.json as { paths: Record<string, object> }).paths).reduce((n, item) => n + Object.keys(item).length, 0);
  await page.locator("#operations-tutors-postTutors").click();
  await page.waitForSelector("#operations-tutors-postTutors .body-param__example, #operations-tutors-postTutors .microlight", { timeout: 10_000 });
  const bodyText = await page.locator("#operations-tutors-postTutors").innerText();
  await page.screenshot({ path: out, fullPage: false });
  if (operations !== documented) throw new Error(`Swagger UI shows ${operations} operations; the document has ${documented}`);
  if (!bodyText.includes("name")) throw new Error("the request body of POST /api/v1/tutors is not rendered");
  if (foreign.length) throw new Error(`requests left 127.0.0.1: ${foreign.join(", ")}`);
  console.log(`/docs renders ${operations} operations offline; screenshot in ${out}`);
} finally {
  await browser.close();
  await t.app.stop(true);
  await t.close();
}
