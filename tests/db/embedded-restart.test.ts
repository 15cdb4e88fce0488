import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { resolveJwtSecret } from "../../src/config";
import { openDatabase } from "../../src/db/client";
import { ManualClock } from "../../src/lib/clock";
import { silentLogger } from "../../src/lib/logger";
import { testConfig } from "../helpers/app";
import { seedDataDir } from "../helpers/database";

const dataDir = mkdtempSync(join(tmpdir(), "vet-clinic-restart-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function start() {
  const database = await openDatabase({ databaseUrl: undefined, dataDir });
  await database.migrate();
  const { app } = createApp({ database, config: testConfig({ dataDir }), clock: new ManualClock(), logger: silentLogger });
  const post = (path: string, json: unknown) =>
    app.handle(new Request(`http://localhost/api/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(json) }));
  return { database, post };
}

test("the embedded database keeps data across a restart (start, register, stop, start, login)", async () => {
  await seedDataDir(dataDir);
  const first = await start();
  expect(first.database.kind).toBe("embedded");
  const registered = await first.post("/auth/register", { email: "keep@clinic.test", password: "a long password", name: "K", clinic_name: "Kept" });
  expect(registered.status, await registered.clone().text()).toBe(201);
  await first.database.close();

  const second = await start();
  const login = await second.post("/auth/login", { email: "keep@clinic.test", password: "a long password" });
  expect(login.status, await login.clone().text()).toBe(200);
  expect(((await login.json()) as { clinic: { name: string } }).clinic.name).toBe("Kept");
  await second.database.close();
}, 60_000);

test("a generated JWT secret is kept in DATA_DIR with mode 0600 and reused", () => {
  const secret = resolveJwtSecret({}, dataDir);
  expect(Buffer.byteLength(secret)).toBeGreaterThanOrEqual(32);
  expect(resolveJwtSecret({}, dataDir)).toBe(secret);
  expect(statSync(join(dataDir, "jwt-secret")).mode & 0o777).toBe(0o600);
  expect(() => resolveJwtSecret({ NODE_ENV: "production" }, join(dataDir, "elsewhere"))).toThrow(/required/);
  expect(() => resolveJwtSecret({ JWT_SECRET: "short" }, dataDir)).toThrow(/32 bytes/);
});

test("a PostgreSQL compile that fails while the embedded database starts is reported, and the data directory is free again", async () => {
  const brokenDir = await seedDataDir(mkdtempSync(join(tmpdir(), "vet-clinic-broken-compile-")));
  try {
    // PGlite starts while the compile is under way and awaits it late; the failure must still surface.
    const failingCompile = Bun.sleep(20).then(() => Promise.reject(new Error("the WebAssembly did not compile")));
    // Handled from the start: on a busy machine the 20 ms can pass before the opening reaches the
    // point where it awaits the module, and an unhandled rejection fails the run by itself.
    failingCompile.catch(() => {});
    await openDatabase({ dataDir: brokenDir, compiledPostgres: failingCompile }).then(
      () => {
        throw new Error("opened despite a failed compile");
      },
      (error: Error) => expect(error.message).toBe("the WebAssembly did not compile"),
    );
    const database = await openDatabase({ dataDir: brokenDir });
    await database.migrate();
    expect(await database.query<{ ok: number }>("select 1 as ok")).toEqual([{ ok: 1 }]);
    await database.close();
  } finally {
    rmSync(brokenDir, { recursive: true, force: true });
  }
}, 60_000);
