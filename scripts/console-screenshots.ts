/**
 * The console screenshots of README.md and docs/console.md, on the demo clinic in headless Chromium:
 * `bun scripts/console-screenshots.ts` writes docs/console-board.png and docs/console-mcp.png.
 */
import { BrowserRun } from "../tests/browser/harness";
import { assistantTraffic, startDemoServer } from "../tests/browser/demo-server";

// The browser first: one that cannot start (Chromium not installed) then leaves no server behind.
const run = await BrowserRun.launch();
const demo = await startDemoServer();
try {
  await assistantTraffic(demo);
  const page = await (await run.context({ viewport: { width: 1280, height: 900 }, locale: "es-CL" })).newPage();
  await page.goto(`${demo.base}/`);
  await page.locator('input[name="email"]').fill(demo.owner.email);
  await page.locator('input[name="password"]').fill(demo.owner.password);
  await page.locator('button[type="submit"]').click();
  await page.locator(".board[aria-busy=false]").waitFor();
  await page.screenshot({ path: "docs/console-board.png" });
  await page.goto(`${demo.base}/#/mcp`);
  await page.locator("canvas").first().waitFor();
  await page.locator('[data-testid="latest-calls"] tbody tr').first().waitFor();
  await page.screenshot({ path: "docs/console-mcp.png", fullPage: true });
  if (run.foreign.length) throw new Error(`requests left 127.0.0.1: ${run.foreign.join(", ")}`);
  console.log("wrote docs/console-board.png and docs/console-mcp.png");
} finally {
  await run.browser.close();
  await demo.stop();
}
