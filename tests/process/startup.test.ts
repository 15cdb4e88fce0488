import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dataDir = mkdtempSync(join(tmpdir(), "vet-clinic-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Reads JSON log lines from a child's stdout until one matches. */
async function waitForLine(reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> }, seen: string[], match: (line: Record<string, unknown>) => boolean) {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process ended before the expected line:\n${seen.join("\n")}`);
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      seen.push(line);
      try {
        const parsed = JSON.parse(line);
        if (match(parsed)) return parsed;
      } catch {
        // Not a log line.
      }
    }
  }
}

test("the server starts, names its URLs and data, serves, and stops cleanly on SIGTERM", async () => {
  const env: Record<string, string> = { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" } as Record<string, string>;
  delete env.DATABASE_URL;
  const child = Bun.spawn(["bun", "src/index.ts"], { cwd: join(import.meta.dir, "../.."), env, stdout: "pipe", stderr: "pipe" });
  const reader = child.stdout.getReader();
  const seen: string[] = [];
  const listening = await waitForLine(reader, seen, (l) => l.msg === "listening");
  expect(listening).toMatchObject({ database: "embedded" });
  expect(String(listening.data)).toContain(dataDir);
  expect(String(listening.mcp_url)).toEndWith("/mcp");
  const health = await fetch(`${listening.base_url}/health`);
  expect(health.status).toBe(200);
  child.kill("SIGTERM");
  await waitForLine(reader, seen, (l) => l.msg === "stopped");
  expect(await child.exited).toBe(0);
}, 60_000);
