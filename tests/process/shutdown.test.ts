import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startServer } from "../helpers/server-process";

const dataDir = mkdtempSync(join(tmpdir(), "vet-clinic-drain-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("SIGTERM lets in-flight requests finish before closing, and loses none of them", async () => {
  const server = await startServer({ DATA_DIR: dataDir });
  const register = (i: number) =>
    call(server.baseUrl, "POST", "/api/v1/auth/register", { json: { email: `drain${i}@clinic.test`, password: "a long password", name: "D", clinic_name: `Drain ${i}` } });
  // Password hashing keeps each register busy for a while; stop as soon as the first is answered.
  const inFlight = Array.from({ length: 6 }, (_, i) => register(i));
  await Promise.race(inFlight);
  const stopped = server.stop("SIGTERM");
  const results = await Promise.all(inFlight);
  expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
  expect(await stopped).toBe(0);

  const restarted = await startServer({ DATA_DIR: dataDir });
  for (let i = 0; i < 6; i++) {
    const login = await call(restarted.baseUrl, "POST", "/api/v1/auth/login", { json: { email: `drain${i}@clinic.test`, password: "a long password" } });
    expect(login.status, login.text).toBe(200);
  }
  expect(await restarted.stop()).toBe(0);
}, 120_000);
