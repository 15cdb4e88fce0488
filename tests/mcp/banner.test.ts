/** The start-up banner names the URLs clients use: PUBLIC_URL's when it is set, the listener's otherwise. */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

const dataDir = mkdtempSync(join(tmpdir(), "vet-banner-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("with PUBLIC_URL every printed URL is PUBLIC_URL's, and the listen address is printed apart", async () => {
  const server = await startServer({ DATA_DIR: dataDir, PUBLIC_URL: "https://clinic.example.com" });
  try {
    const listening = await server.waitForLog((line) => line.msg === "listening");
    expect(listening).toMatchObject({
      base_url: "https://clinic.example.com",
      console_url: "https://clinic.example.com/",
      api_url: "https://clinic.example.com/api/v1",
      mcp_url: "https://clinic.example.com/mcp",
      docs_url: "https://clinic.example.com/docs",
    });
    expect(String(listening.listen)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const metadata = (await (await fetch(`${listening.listen}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource: string };
    expect(metadata.resource).toBe(listening.mcp_url as string);
  } finally {
    await server.stop();
  }
}, SERVER_STOP_TIMEOUT_MS + 30_000);
