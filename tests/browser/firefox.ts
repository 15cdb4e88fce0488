/**
 * Firefox (Debian's `firefox-esr`) driven over WebDriver BiDi, the protocol it ships with.
 * Playwright's own Firefox is a separate download, and its BiDi mode needs commands this ESR
 * does not have yet, so the few calls the Firefox checks need are made here directly.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const FIREFOX_PATH = process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr";

// No background traffic of the browser's own (updates, telemetry, remote settings).
const QUIET_PREFS = `
user_pref("app.update.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("services.settings.server", "http://127.0.0.1:9/");
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("browser.safebrowsing.downloads.remote.enabled", false);
`;

export class Firefox {
  /** Page script errors, as Firefox logs them. */
  readonly errors: string[] = [];
  /** Every request of the page to a host other than 127.0.0.1. */
  readonly foreign: string[] = [];
  private nextId = 1;
  private pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();

  private constructor(
    private readonly process: Bun.Subprocess,
    private readonly socket: WebSocket,
    private readonly profile: string,
    private context = "",
  ) {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data));
      if (message.id !== undefined) {
        const waiter = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (message.type === "error") waiter?.reject(new Error(`${message.error}: ${message.message}`));
        else waiter?.resolve(message.result);
      } else if (message.method === "log.entryAdded" && message.params.level === "error") {
        this.errors.push(message.params.text);
      } else if (message.method === "network.beforeRequestSent") {
        const url = new URL(message.params.request.url);
        if (url.protocol.startsWith("http") && url.hostname !== "127.0.0.1") this.foreign.push(url.href);
      }
    });
  }

  static async launch(): Promise<Firefox> {
    const profile = mkdtempSync(join(tmpdir(), "vet-firefox-"));
    writeFileSync(join(profile, "user.js"), QUIET_PREFS);
    const child = Bun.spawn([FIREFOX_PATH, "--headless", "--remote-debugging-port=0", "--profile", profile, "--no-remote", "about:blank"], { stdout: "ignore", stderr: "pipe" });
    const reader = child.stderr.getReader();
    let output = "";
    let endpoint: string | undefined;
    while (!endpoint) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`firefox exited: ${output}`);
      output += new TextDecoder().decode(value);
      endpoint = /WebDriver BiDi listening on (ws:\/\/\S+)/.exec(output)?.[1];
    }
    void (async () => {
      while (!(await reader.read()).done);
    })();
    const socket = new WebSocket(`${endpoint}/session`);
    await new Promise((resolve, reject) => {
      socket.addEventListener("open", resolve, { once: true });
      socket.addEventListener("error", reject, { once: true });
    });
    const firefox = new Firefox(child, socket, profile);
    await firefox.send("session.new", { capabilities: {} });
    await firefox.send("session.subscribe", { events: ["log.entryAdded", "network.beforeRequestSent"] });
    const tree = await firefox.send("browsingContext.getTree", {});
    firefox.context = tree.contexts[0].context;
    await firefox.send("browsingContext.setViewport", { context: firefox.context, viewport: { width: 1024, height: 768 } });
    return firefox;
  }

  send(method: string, params: Record<string, unknown>): Promise<any> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  async goto(url: string): Promise<void> {
    await this.send("browsingContext.navigate", { context: this.context, url, wait: "complete" });
  }

  /** Evaluates an expression in the page (promises awaited) and returns its value. */
  async evaluate<T>(expression: string): Promise<T> {
    const result = await this.send("script.evaluate", { expression, target: { context: this.context }, awaitPromise: true, resultOwnership: "none", serializationOptions: { maxObjectDepth: 0 } });
    if (result.type === "exception") throw new Error(`in the page: ${result.exceptionDetails.text}`);
    return result.result.value as T;
  }

  /** Waits (up to 10 s) until the expression is true in the page, by asking the page to watch. */
  async waitFor(expression: string): Promise<void> {
    const found = await this.evaluate<boolean>(`new Promise((resolve) => {
      const check = () => { try { return Boolean(${expression}); } catch { return false; } };
      if (check()) return resolve(true);
      const observer = new MutationObserver(() => { if (check()) { observer.disconnect(); resolve(true); } });
      observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      setTimeout(() => { observer.disconnect(); resolve(check()); }, 10000);
    })`);
    if (!found) throw new Error(`not seen in Firefox within 10 s: ${expression}`);
  }

  async screenshot(path: string): Promise<void> {
    const { data } = await this.send("browsingContext.captureScreenshot", { context: this.context });
    await Bun.write(path, Buffer.from(data, "base64"));
  }

  async close(): Promise<void> {
    this.socket.close();
    this.process.kill();
    await this.process.exited;
    rmSync(this.profile, { recursive: true, force: true });
  }
}
