import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../helpers/server-process";

const dataDir = mkdtempSync(join(tmpdir(), "vet-clinic-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("the server starts, names its URLs and data, serves, and stops cleanly on SIGTERM", async () => {
  const server = await startServer({ DATA_DIR: dataDir });
  const listening = await server.waitForLog((l) => l.msg === "listening");
  expect(listening).toMatchObject({ database: "embedded" });
  expect(String(listening.data)).toContain(dataDir);
  expect(String(listening.mcp_url)).toEndWith("/mcp");
  const health = await fetch(`${server.baseUrl}/health`);
  expect(health.status).toBe(200);
  expect(await server.stop("SIGTERM")).toBe(0);
  expect(server.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
}, 60_000);
