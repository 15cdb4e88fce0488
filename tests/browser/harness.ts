/**
 * The browser suites' frame: headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) through
 * playwright-core, named checks that print "(pass)"/"(fail)" as they go, a record of every
 * request that leaves 127.0.0.1, and one closing line "N passed, N failed".
 */
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from "playwright-core";

/** The Chromium the browser suites and the console benchmark drive: Debian's, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export class BrowserRun {
  readonly results: { name: string; error?: string }[] = [];
  /** Every request any page made to a host other than 127.0.0.1. */
  readonly foreign: string[] = [];
  private constructor(readonly browser: Browser) {}

  static async launch(): Promise<BrowserRun> {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    return new BrowserRun(browser);
  }

  async context(options: BrowserContextOptions = {}): Promise<BrowserContext> {
    const context = await this.browser.newContext(options);
    context.on("request", (request) => {
      const url = new URL(request.url());
      if (url.protocol !== "data:" && url.hostname !== "127.0.0.1") this.foreign.push(request.url());
    });
    return context;
  }

  async check(name: string, run: () => Promise<void>): Promise<void> {
    const started = performance.now();
    try {
      await run();
      this.results.push({ name });
      console.log(`(pass) ${name} [${Math.round(performance.now() - started)} ms]`);
    } catch (error) {
      this.results.push({ name, error: String(error) });
      console.log(`(fail) ${name}: ${error instanceof Error ? (error.stack ?? error.message) : error}`);
    }
  }

  /** Closes the browser, prints the totals and returns the exit code. */
  async finish(): Promise<number> {
    await this.browser.close();
    const failed = this.results.filter((r) => r.error).length;
    console.log(`${this.results.length - failed} passed, ${failed} failed`);
    return failed ? 1 : 0;
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}
