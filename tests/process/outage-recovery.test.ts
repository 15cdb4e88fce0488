/**
 * Outages of PostgreSQL as clients under load see them, made with a TCP proxy between the
 * service and the server (the shared server keeps running): while it is away every call is
 * answered (503 with Retry-After) within a few seconds; once it accepts connections again every
 * REST and MCP client gets its first success within a second, and /ready turns 200 as soon.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { call, startServer, type ServerProcess } from "../helpers/server-process";
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

let pg: TestDatabase;
let proxy: TcpProxy;
let server: ServerProcess;
const tokens: string[] = [];
let apiKey = "";

describe.skipIf(!POSTGRES_URL)("outages of PostgreSQL under load", () => {
  beforeAll(async () => {
    pg = await createTestDatabase();
    const upstream = new URL(pg.url!);
    proxy = startTcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    // Everything goes through the proxy, the key listener too: the outage reaches all of it.
    server = await startServer({ DATABASE_URL: proxy.urlThrough(pg.url!), LOG_LEVEL: "warn" });
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
    proxy?.close();
    await pg?.destroy();
  });

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
        proxy.cut(mode);
        await Bun.sleep(OUTAGE_MS);
        const restoredAt = performance.now();
        proxy.restore();
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
});
