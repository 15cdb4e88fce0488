/**
 * Outages of PostgreSQL as clients under load see them, made with a TCP proxy between the
 * service and the server (the shared server keeps running): while it is away every call is
 * answered (503 with Retry-After) within a few seconds; once it accepts connections again every
 * REST and MCP client gets its first success within a second, and /ready turns 200 as soon.
 * Twice: with DATABASE_URL alone (a session: named prepared statements), and with
 * DATABASE_DIRECT_URL set as well (DATABASE_URL then counts as a pooler: every statement is
 * unnamed), each URL through a proxy of its own, both cut together. In the pooled pass of .ci/run
 * DATABASE_URL is PgBouncer, and the second runs with the pooler between the proxy and the server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createTestDatabase, POSTGRES_DIRECT_URL, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { call, startServer, type ServerProcess, SERVER_STOP_TIMEOUT_MS } from "../helpers/server-process";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy";

/** The driver's connect timeout (2 s) and what a loaded test machine adds. */
const ANSWER_WITHIN_MS = 3_500;
const HEAL_WITHIN_MS = 1_000;
const OUTAGE_MS = 2_500;
const PACE_MS = 40;

interface Answer {
  client: string;
  sentAt: number;
  answeredAt: number;
  status: number;
  retryAfter: string | null;
}

const proxyTo = (url: string) => {
  const upstream = new URL(url);
  return startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
};

// Behind a pooler (the pooled pass) DATABASE_URL alone is not a session: only the second applies.
describe.skipIf(!POSTGRES_URL || !!POSTGRES_DIRECT_URL)("outages of PostgreSQL under load, DATABASE_URL alone (named statements)", () => {
  outageSuite({ withDirectUrl: false });
});
describe.skipIf(!POSTGRES_URL)("outages of PostgreSQL under load, with DATABASE_DIRECT_URL (unnamed statements)", () => {
  outageSuite({ withDirectUrl: true });
});

// The driver underneath: postgres.js keeps a reserved connection's statements that wait for the
// one in flight (each unnamed statement with parameters is described first, a round trip on its
// own) in a queue of the reservation; a lost connection left them there, unsettled, forever.
describe.skipIf(!POSTGRES_URL)("a reserved connection lost with statements waiting on it", () => {
  test("every statement sent on it rejects with a connection error", async () => {
    const proxy = proxyTo(POSTGRES_URL!);
    const client = postgres(proxy.urlThrough(POSTGRES_URL!), { max: 1, prepare: false, connect_timeout: 2, onnotice: () => {} });
    const observer = postgres(POSTGRES_URL!, { max: 1, prepare: false, onnotice: () => {} });
    try {
      const connection = await client.reserve();
      const sleeping = "select $1::int as n, pg_sleep(5) as sleeping";
      // Sent now (a postgres.js query goes out when it is awaited or executed).
      const statements = [
        connection.unsafe("begin read only").execute(),
        connection.unsafe(sleeping, ["1"]).execute(),
        ...[2, 3, 4].map((n) => connection.unsafe("select $1::int as n", [String(n)]).execute()),
        connection.unsafe("commit").execute(),
      ];
      // Cut once the sleeping statement runs on the server: the others wait behind it.
      const deadline = performance.now() + 5_000;
      while (performance.now() < deadline) {
        const [running] = await observer`select count(*)::int as n from pg_stat_activity where query = ${sleeping} and state = 'active'`;
        if (running!.n > 0) break;
        await Bun.sleep(20);
      }
      proxy.cut("refuse");
      const unsettled = "still unsettled 3 s after the connection was lost";
      const outcomes = await Promise.race([Promise.allSettled(statements), Bun.sleep(3_000).then(() => unsettled)]);
      if (typeof outcomes === "string") throw new Error(outcomes);
      expect(outcomes[0]!.status).toBe("fulfilled");
      for (const outcome of outcomes.slice(1)) {
        expect(outcome.status).toBe("rejected");
        expect((outcome as PromiseRejectedResult).reason.code).toBe("CONNECTION_CLOSED");
      }
      connection.release();
    } finally {
      proxy.close();
      await Promise.all([client.end({ timeout: 1 }), observer.end({ timeout: 1 })]);
    }
  }, 20_000);
});

// postgres.js fetches the array types on each new connection and dropped that query's promise:
// one that failed (its connection lost at that moment, seen once in about ten outage runs, or
// cancelled by a statement timeout as here) was an unhandled rejection, which ends the process.
describe.skipIf(!POSTGRES_URL)("a connection whose array-types query fails", () => {
  test("leaves no unhandled rejection behind", async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", record);
    const client = postgres(POSTGRES_URL!, { max: 1, onnotice: () => {}, connection: { statement_timeout: 1 } as Record<string, unknown> as postgres.ConnectionParameters });
    try {
      await client`select 1`.catch(() => {});
      // Unhandled rejections are reported after the microtasks of the turn that made them.
      await Bun.sleep(50);
      expect(unhandled.map((reason) => (reason as { code?: string }).code ?? String(reason))).toEqual([]);
    } finally {
      process.off("unhandledRejection", record);
      await client.end({ timeout: 1 });
    }
  });
});

function outageSuite({ withDirectUrl }: { withDirectUrl: boolean }) {
  let pg: TestDatabase;
  const proxies: TcpProxy[] = [];
  let server: ServerProcess;
  const tokens: string[] = [];
  let apiKey = "";

  beforeAll(async () => {
    pg = await createTestDatabase();
    // Everything goes through a proxy, the key listener too: the outage reaches all of it.
    const pooled = proxyTo(pg.url!);
    proxies.push(pooled);
    const env: Record<string, string> = { DATABASE_URL: pooled.urlThrough(pg.url!), LOG_LEVEL: "warn" };
    if (withDirectUrl) {
      const directUrl = pg.directUrl ?? pg.url!;
      const direct = proxyTo(directUrl);
      proxies.push(direct);
      env.DATABASE_DIRECT_URL = direct.urlThrough(directUrl);
    }
    server = await startServer(env);
    const owner = await call(server.baseUrl, "POST", "/api/v1/auth/register", {
      json: { email: "outage@clinic.test", password: "a long password", name: "O", clinic_name: "Outage" },
    });
    expect(owner.status, owner.text).toBe(201);
    tokens.push(owner.body.access_token);
    // One user per REST client: each stays far below the per-user rate limit.
    for (const n of [1, 2]) {
      const email = `vet${n}@outage.test`;
      const created = await call(server.baseUrl, "POST", "/api/v1/users", { token: tokens[0], json: { email, name: `Vet ${n}`, role: "vet", password: "a long password" } });
      expect(created.status, created.text).toBe(201);
      const login = await call(server.baseUrl, "POST", "/api/v1/auth/login", { json: { email, password: "a long password" } });
      tokens.push(login.body.access_token);
    }
    // A clinic whose burst cap the clients cannot reach.
    await pg.query("update clinics set plan = 'enterprise', burst_per_minute = 1000000");
    const key = await call(server.baseUrl, "POST", "/api/v1/mcp/keys", { token: tokens[0], json: { name: "load", scopes: ["query"], rate_limit_per_day: 1_000_000 } });
    expect(key.status, key.text).toBe(201);
    apiKey = key.body.api_key;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    for (const proxy of proxies) proxy.close();
    await pg?.destroy();
  }, SERVER_STOP_TIMEOUT_MS);

  test("three outages (refused, silent, refused): every call answers within seconds, every client heals within a second", async () => {
    const answers: Answer[] = [];
    let running = true;
    const request = (client: string, path: string, init: RequestInit) => async () => {
      const sentAt = performance.now();
      try {
        const response = await fetch(`${server.baseUrl}${path}`, init);
        const text = await response.text();
        if (response.status !== 200 && response.status !== 503) console.error(client, response.status, text.slice(0, 300));
        answers.push({ client, sentAt, answeredAt: performance.now(), status: response.status, retryAfter: response.headers.get("retry-after") });
      } catch {
        // The server itself did not answer: recorded as no answer, which the checks refuse.
        answers.push({ client, sentAt, answeredAt: performance.now(), status: 0, retryAfter: null });
      }
    };
    const sql = JSON.stringify({ sql: "select count(*) as n from tutors" });
    const clients: [string, () => Promise<void>][] = [
      ...tokens.map((token, i): [string, () => Promise<void>] => [`rest-${i}`, request(`rest-${i}`, "/api/v1/tutors", { headers: { authorization: `Bearer ${token}` } })]),
      ...[0, 1].map((i): [string, () => Promise<void>] => [
        `invoke-${i}`,
        request(`invoke-${i}`, "/mcp/tools/query_database/invoke", { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: sql }),
      ]),
      ...[0, 1].map((i): [string, () => Promise<void>] => [
        `jsonrpc-${i}`,
        request(`jsonrpc-${i}`, "/mcp", {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "query_database", arguments: JSON.parse(sql) } }),
        }),
      ]),
      ["ready", request("ready", "/ready", {})],
    ];
    const loops = clients.map(async ([, send]) => {
      while (running) {
        await send();
        await Bun.sleep(PACE_MS);
      }
    });
    // A JSON-RPC tool error is still HTTP 200; the answer's own status is what a client sees.
    const everyClientSucceededAfter = (at: number) => clients.every(([client]) => answers.some((a) => a.client === client && a.status === 200 && a.sentAt >= at));

    try {
      const warmUp = performance.now() + 10_000;
      while (!everyClientSucceededAfter(0) && performance.now() < warmUp) await Bun.sleep(20);
      expect(everyClientSucceededAfter(0)).toBe(true);
      const outages: { mode: "refuse" | "silent"; cutAt: number; restoredAt: number }[] = [];
      for (const mode of ["refuse", "silent", "refuse"] as const) {
        const cutAt = performance.now();
        for (const proxy of proxies) proxy.cut(mode);
        await Bun.sleep(OUTAGE_MS);
        const restoredAt = performance.now();
        for (const proxy of proxies) proxy.restore();
        outages.push({ mode, cutAt, restoredAt });
        // Until every client has had a success after the restore (bounded, asserted below).
        const deadline = restoredAt + 5_000;
        while (performance.now() < deadline && !everyClientSucceededAfter(restoredAt)) await Bun.sleep(20);
        await Bun.sleep(300);
      }
      running = false;
      await Promise.all(loops);

      for (const { mode, cutAt, restoredAt } of outages) {
        // Every call the outage touched: sent during it, or in flight when it began.
        const during = answers.filter((a) => a.answeredAt >= cutAt && a.sentAt < restoredAt);
        expect(during.length, `${mode}: calls during the outage`).toBeGreaterThanOrEqual(clients.length);
        for (const answer of during) {
          expect(answer.answeredAt - answer.sentAt, `${mode}: ${answer.client} waited`).toBeLessThan(ANSWER_WITHIN_MS);
          if (answer.status !== 200) {
            expect(answer.status, `${mode}: ${answer.client}`).toBe(503);
            expect(answer.retryAfter, `${mode}: ${answer.client}`).toBe("1");
          }
        }
        if (mode === "refuse") expect(during.filter((a) => a.client.startsWith("rest") && a.status === 503).length, `${mode}: REST 503s`).toBeGreaterThan(0);
        for (const [client] of clients) {
          const firstSuccess = answers.find((a) => a.client === client && a.status === 200 && a.sentAt >= restoredAt);
          if (!firstSuccess || firstSuccess.answeredAt - restoredAt >= HEAL_WITHIN_MS)
            console.error(mode, client, answers.filter((a) => a.client === client && a.answeredAt > restoredAt - 500 && a.sentAt < restoredAt + 6000).map((a) => `${Math.round(a.sentAt - restoredAt)}..${Math.round(a.answeredAt - restoredAt)}:${a.status}`).join(" "));
          expect(firstSuccess!.answeredAt - restoredAt, `${mode}: ${client}'s first success after the restore`).toBeLessThan(HEAL_WITHIN_MS);
        }
      }
    } finally {
      running = false;
      await Promise.all(loops);
    }
  }, 60_000);
}
