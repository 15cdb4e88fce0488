/**
 * The console's budgets: JavaScript + CSS of the first screen (gzipped, as built into the
 * binary), sign-in to a rendered board on the demo clinic in headless Chromium (median of 5
 * fresh sessions), and how much the console adds to the single binary (the same build with the
 * console's page replaced by an empty module is the baseline).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BrowserRun, CHROMIUM } from "../tests/browser/harness";
import { startDemoServer } from "../tests/browser/demo-server";
import { printTable } from "./lib/table";

const ROOT = join(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "vet-console-bench-"));
const kb = (bytes: number) => Math.round(bytes / 102.4) / 10;

async function firstScreenBytes() {
  const built = await Bun.build({ entrypoints: [join(ROOT, "src/console/index.html")], outdir: join(work, "assets"), minify: true });
  if (!built.success) throw new Error(built.logs.join("\n"));
  let raw = 0;
  let gzipped = 0;
  for (const output of built.outputs) {
    if (!/\.(js|css)$/.test(output.path)) continue;
    const bytes = new Uint8Array(await output.arrayBuffer());
    raw += bytes.length;
    gzipped += Bun.gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzipped };
}

async function binarySize(withConsole: boolean): Promise<number> {
  const outfile = join(work, withConsole ? "with-console" : "without-console");
  const stub: Bun.BunPlugin = {
    name: "no-console",
    setup(build) {
      build.onResolve({ filter: /console\/index\.html$/ }, () => ({ path: "no-console", namespace: "stub" }));
      build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export default {};", loader: "js" }));
    },
  };
  const built = await Bun.build({ entrypoints: [join(ROOT, "src/index.ts")], compile: { outfile }, minify: true, plugins: withConsole ? [] : [stub] } as Bun.BuildConfig);
  if (!built.success) throw new Error(built.logs.join("\n"));
  return statSync(outfile).size;
}

async function signInToBoard(): Promise<number[]> {
  const demo = await startDemoServer();
  const timings: number[] = [];
  // Launched inside the try: a browser that cannot start (Chromium not installed) must not leave the demo server running.
  let run: BrowserRun | undefined;
  try {
    run = await BrowserRun.launch();
    for (let i = 0; i < 6; i++) {
      const context = await run.context({ viewport: { width: 1024, height: 768 } });
      const page = await context.newPage();
      await page.goto(`${demo.base}/`);
      await page.locator('input[name="email"]').fill(demo.owner.email);
      await page.locator('input[name="password"]').fill(demo.owner.password);
      const started = performance.now();
      await page.locator('button[type="submit"]').click();
      await page.locator(".board[aria-busy=false] .visit").first().waitFor();
      // The first round warms the server (the board's statements); it is not counted.
      if (i > 0) timings.push(performance.now() - started);
      await context.close();
    }
  } finally {
    await run?.browser.close();
    await demo.stop();
  }
  return timings.sort((a, b) => a - b);
}

try {
  const screen = await firstScreenBytes();
  const [withConsole, withoutConsole] = [await binarySize(true), await binarySize(false)];
  // Without a browser the other budgets are still measured, and the table says what is missing.
  const timings = existsSync(CHROMIUM) ? await signInToBoard() : undefined;
  const median = timings?.[Math.floor(timings.length / 2)];
  const growth = withConsole - withoutConsole;
  printTable("Console budgets", [
    { measure: "first screen JS + CSS, gzipped (minified)", value: `${kb(screen.gzipped)} KB (${kb(screen.raw)} KB raw)`, budget: "< 150 KB", met: screen.gzipped < 150 * 1024 ? "yes" : "no" },
    median === undefined
      ? { measure: "sign-in to a rendered board, demo clinic (median of 5)", value: `not measured: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`, budget: "< 1 s", met: "—" }
      : { measure: "sign-in to a rendered board, demo clinic (median of 5)", value: `${Math.round(median)} ms`, budget: "< 1 s", met: median < 1000 ? "yes" : "no" },
    { measure: "binary growth from the console", value: `${kb(growth)} KB (${Math.round(withConsole / 1e5) / 10} MB in all)`, budget: "< 5 MB", met: growth < 5 * 1024 * 1024 ? "yes" : "no" },
  ]);
} finally {
  rmSync(work, { recursive: true, force: true });
}
