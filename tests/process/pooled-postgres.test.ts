/**
 * Several instances behind a transaction-mode pooler: Debian's PgBouncer with a server pool of
 * 2, smaller than each instance's client pool, so anything that relies on a session (named
 * prepared statements, session settings, LISTEN, session locks) breaks visibly. Started here
 * (scripts/pgbouncer-for-tests.sh) in front of the test's PostgreSQL server; runs when
 * DATABASE_URL is a PostgreSQL URL and pgbouncer is installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase, type Database, type ListenHandlers } from "../../src/db/client";
import { systemClock } from "../../src/lib/clock";
import { ApiKeyDirectory } from "../../src/modules/mcp-keys/directory";
import { createTestDatabase, POSTGRES_URL, type TestDatabase, urlForDatabase } from "../helpers/database";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";

const SCRIPT = join(import.meta.dir, "../../scripts/pgbouncer-for-tests.sh");
const havePgbouncer = Bun.which("pgbouncer") !== null;

interface Pooler {
  port: number;
  dir: string;
}

function startPooler(upstream: URL): Pooler {
  const started = Bun.spawnSync(["bash", SCRIPT, "start"], {
    env: { ...process.env, PGBOUNCER_PORT: "", PGBOUNCER_UPSTREAM_HOST: upstream.hostname, PGBOUNCER_UPSTREAM_PORT: upstream.port || "5432", PGBOUNCER_POOL_SIZE: "2" },
  });
  const out = started.stdout.toString();
  if (started.exitCode !== 0) throw new Error(`pgbouncer did not start: ${out}${started.stderr.toString()}`);
  return { port: Number(/PGBOUNCER_PORT=(\d+)/.exec(out)![1]), dir: /PGBOUNCER_DIR=(\S+)/.exec(out)![1]! };
}

let pg: TestDatabase;
let pooler: Pooler;
let pooledUrl: string;
let directUrl: string;

const register = async (server: ServerProcess, email: string) => {
  const r = await call(server.baseUrl, "POST", "/api/v1/auth/register", { json: { email, password: "a long password", name: "P", clinic_name: `Pooled ${email}` } });
  expect(r.status, r.text).toBe(201);
  return r.body.access_token as string;
};
const newKey = async (server: ServerProcess, token: string) => {
  const r = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", { token, json: { name: "k", scopes: ["query", "clinic_context"], rate_limit_per_day: 100_000 } });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; api_key: string };
};
const queryDatabase = (server: ServerProcess, key: string) =>
  call(server.baseUrl, "POST", "/mcp/tools/query_database/invoke", { token: key, json: { sql: "select count(*) as n from tutors" } });

describe.skipIf(!POSTGRES_URL || !havePgbouncer)("instances behind a transaction-mode PgBouncer (server pool of 2)", () => {
  beforeAll(async () => {
    pg = await createTestDatabase();
    directUrl = pg.directUrl ?? pg.url!;
    pooler = startPooler(new URL(directUrl));
    pooledUrl = urlForDatabase(`postgres://postgres@127.0.0.1:${pooler.port}/`, new URL(directUrl).pathname.slice(1));
  }, 60_000);
  afterAll(async () => {
    await pg?.destroy();
    if (pooler) Bun.spawnSync(["bash", SCRIPT, "stop", pooler.dir]);
  });

  describe("with DATABASE_DIRECT_URL", () => {
    let servers: ServerProcess[] = [];
    let owner = "";
    beforeAll(async () => {
      servers = await Promise.all([0, 1, 2].map(() => startServer({ DATABASE_URL: pooledUrl, DATABASE_DIRECT_URL: directUrl, QUOTA_FLUSH_MS: "200" })));
      owner = await register(servers[0]!, "direct@pooled.test");
      // Enterprise, so that the burst cap stays out of the way of concurrent calls.
      await pg.query("update clinics set plan = 'enterprise', burst_per_minute = 100000");
    }, 60_000);
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
    }, SERVER_STOP_TIMEOUT_MS);

    test("/ready says the statements are pooled and key changes arrive by NOTIFY", async () => {
      for (const server of servers) {
        const ready = await call(server.baseUrl, "GET", "/ready");
        expect(ready.status, ready.text).toBe(200);
        expect(ready.body).toMatchObject({ statements: "pooled", key_revocation: "notify" });
      }
    });

    test("concurrent payments on one invoice through three instances: exactly what fits, never a 500", async () => {
      const tutor = await call(servers[0]!.baseUrl, "POST", "/api/v1/tutors", { token: owner, json: { name: "Payer" } });
      const draft = await call(servers[1]!.baseUrl, "POST", "/api/v1/billing/invoices", {
        token: owner,
        json: { tutor_id: tutor.body.id, items: [{ description: "Servicio", quantity: 7, unit_price: 1_000 }] },
      });
      expect(draft.status, draft.text).toBe(201);
      const invoice = await call(servers[2]!.baseUrl, "POST", `/api/v1/billing/invoices/${draft.body.id}/emit`, { token: owner });
      expect(invoice.body.total_amount).toBe(8_330); // 7 payments of 1,190 fit
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) => call(servers[i % 3]!.baseUrl, "POST", "/api/v1/billing/payments", { token: owner, json: { invoice_id: invoice.body.id, amount: 1_190, method: "card" } })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201).length, JSON.stringify(statuses)).toBe(7);
      expect(statuses.filter((s) => s === 422).length, JSON.stringify(statuses)).toBe(17);
      const after = await call(servers[0]!.baseUrl, "GET", `/api/v1/billing/invoices/${invoice.body.id}`, { token: owner });
      expect(after.body).toMatchObject({ paid_amount: 8_330, status: "paid" });
    }, 30_000);

    test("a fresh login on one instance works at once on the others", async () => {
      for (let round = 0; round < 5; round++) {
        const login = await call(servers[round % 3]!.baseUrl, "POST", "/api/v1/auth/login", { json: { email: "direct@pooled.test", password: "a long password" } });
        expect(login.status, login.text).toBe(200);
        const seen = await Promise.all(servers.map((s) => call(s.baseUrl, "GET", "/api/v1/auth/me", { token: login.body.access_token })));
        for (const r of seen) expect(r.status, r.text).toBe(200);
      }
    }, 30_000);

    test("query_database from many clients on three instances: every call answers, none hangs", async () => {
      const key = await newKey(servers[0]!, owner);
      const results = await Promise.all(Array.from({ length: 36 }, (_, i) => queryDatabase(servers[i % 3]!, key.api_key)));
      for (const r of results) expect(r.status, r.text).toBe(200);
    }, 30_000);

    test("a key revoked through one instance is refused by the others on their next call", async () => {
      const key = await newKey(servers[0]!, owner);
      for (const server of servers) expect((await queryDatabase(server, key.api_key)).status).toBe(200);
      const revoked = await call(servers[0]!.baseUrl, "DELETE", `/api/v1/mcp/keys/${key.id}`, { token: owner });
      expect(revoked.status, revoked.text).toBe(204);
      for (const server of servers.slice(1)) {
        const refused = await queryDatabase(server, key.api_key);
        expect(refused.status, refused.text).toBe(401);
        expect(refused.body.code).toBe("API_KEY_REVOKED");
      }
    });
  });

  describe("without DATABASE_DIRECT_URL: LISTEN hears nothing through the pooler", () => {
    let servers: ServerProcess[] = [];
    let owner = "";
    beforeAll(async () => {
      servers = await Promise.all([0, 1].map(() => startServer({ DATABASE_URL: pooledUrl, QUOTA_FLUSH_MS: "200" })));
      owner = await register(servers[0]!, "pooled-only@pooled.test");
      await pg.query("update clinics set plan = 'enterprise', burst_per_minute = 100000");
    }, 60_000);
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.stop()));
    }, SERVER_STOP_TIMEOUT_MS);

    test("the probe finds it out: /ready says key_revocation expiring, statements undecided; the log says why", async () => {
      for (const server of servers) {
        const ready = await call(server.baseUrl, "GET", "/ready");
        expect(ready.status, ready.text).toBe(200);
        expect(ready.body).toMatchObject({ statements: "undecided", key_revocation: "expiring" });
        // The first probe's verdict comes within its 2 s wait (the lines are read as they arrive).
        const cacheOff = () => server.lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => String(line.msg).startsWith("api key cache off"));
        const deadline = performance.now() + 5_000;
        while (!cacheOff() && performance.now() < deadline) await Bun.sleep(50);
        const warning = cacheOff();
        expect(warning, server.lines.join("\n")).toBeDefined();
        expect(String(warning!.reason)).toContain("DATABASE_DIRECT_URL");
      }
    });

    test("an instance behind the pooler never moves to the long-lived cache, even when a notice of its own reaches it by chance", async () => {
      const database = await openDatabase({ databaseUrl: pooledUrl, dataDir: "/nonexistent" });
      let handlers: ListenHandlers | undefined;
      // The pooler's chance delivery (a notice sent while the listener runs a statement on the
      // server that listens), made certain: every notice this instance sends reaches its listener.
      const lucky: Database = Object.assign(Object.create(database) as Database, {
        listen: (channel: string, given: ListenHandlers) => {
          handlers = given;
          return database.listen(channel, given);
        },
        notify: async (channel: string, payload: string) => {
          await database.notify(channel, payload);
          handlers?.onMessage(payload);
        },
      });
      const directory = new ApiKeyDirectory(lucky, systemClock);
      try {
        await directory.start();
        await directory.probe();
        expect(directory.revocationMode).toBe("expiring");
        expect(database.connectionMode).toBe("undecided");
      } finally {
        await directory.stop();
        await database.close();
      }
    });

    test("a revoked key stops on the other instance within 1 s", async () => {
      const key = await newKey(servers[0]!, owner);
      // Cached on the other instance, then revoked through the first.
      expect((await queryDatabase(servers[1]!, key.api_key)).status).toBe(200);
      const revoked = await call(servers[0]!.baseUrl, "DELETE", `/api/v1/mcp/keys/${key.id}`, { token: owner });
      expect(revoked.status, revoked.text).toBe(204);
      const revokedAt = performance.now();
      let refusedAfter: number | undefined;
      while (refusedAfter === undefined && performance.now() - revokedAt < 3_000) {
        const r = await queryDatabase(servers[1]!, key.api_key);
        if (r.status === 401) refusedAfter = performance.now() - revokedAt;
        else expect(r.status, r.text).toBe(200);
      }
      expect(refusedAfter).toBeDefined();
      expect(refusedAfter!).toBeLessThanOrEqual(1_000 + 100);
      // And stays refused everywhere.
      for (const server of servers) expect((await queryDatabase(server, key.api_key)).status).toBe(401);
    });

    test("a rotated key's old value stops on every instance within 1 s, and the new value works everywhere", async () => {
      for (let round = 0; round < 3; round++) {
        const key = await newKey(servers[round % 2]!, owner);
        // Cached on both instances, then rotated through one of them.
        for (const server of servers) expect((await queryDatabase(server, key.api_key)).status).toBe(200);
        const rotated = await call(servers[round % 2]!.baseUrl, "POST", `/api/v1/mcp/keys/${key.id}/rotate`, { token: owner });
        expect(rotated.status, rotated.text).toBe(200);
        const rotatedAt = performance.now();
        for (const server of servers) {
          let refusedAfter: number | undefined;
          while (refusedAfter === undefined && performance.now() - rotatedAt < 3_000) {
            const r = await queryDatabase(server, key.api_key);
            if (r.status === 401) refusedAfter = performance.now() - rotatedAt;
            else expect(r.status, r.text).toBe(200);
          }
          expect(refusedAfter, `round ${round}`).toBeDefined();
          expect(refusedAfter!, `round ${round}`).toBeLessThanOrEqual(1_000 + 100);
          expect((await queryDatabase(server, rotated.body.api_key)).status).toBe(200);
        }
      }
      // Neither instance has moved to the long-lived cache meanwhile.
      for (const server of servers) expect((await call(server.baseUrl, "GET", "/ready")).body).toMatchObject({ key_revocation: "expiring" });
    }, 30_000);

    test("query_database and payments work all the same", async () => {
      const key = await newKey(servers[1]!, owner);
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => queryDatabase(servers[i % 2]!, key.api_key)));
      for (const r of results) expect(r.status, r.text).toBe(200);
      const tutor = await call(servers[0]!.baseUrl, "POST", "/api/v1/tutors", { token: owner, json: { name: "Payer" } });
      const draft = await call(servers[1]!.baseUrl, "POST", "/api/v1/billing/invoices", { token: owner, json: { tutor_id: tutor.body.id, items: [{ description: "Servicio", quantity: 3, unit_price: 1_000 }] } });
      const invoice = await call(servers[0]!.baseUrl, "POST", `/api/v1/billing/invoices/${draft.body.id}/emit`, { token: owner });
      const payments = await Promise.all(Array.from({ length: 8 }, (_, i) => call(servers[i % 2]!.baseUrl, "POST", "/api/v1/billing/payments", { token: owner, json: { invoice_id: invoice.body.id, amount: 1_190, method: "card" } })));
      expect(payments.filter((r) => r.status === 201).length, JSON.stringify(payments.map((r) => r.status))).toBe(3);
      expect(payments.filter((r) => r.status === 422).length).toBe(5);
    }, 30_000);
  });
});
