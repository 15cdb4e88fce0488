/** Faults: outages answer 503, the key cache never outlives its listener, quotas and usage agree. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { openDatabase } from "../../src/db/client";
import type { CursorPageBody } from "../../src/http/pagination";
import type { TutorView } from "../../src/modules/tutors/model";
import { createTestApp, type ErrorBody, type TestApp } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { createTestDatabase, POSTGRES_DIRECT_URL, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { createKey, invoke, storedQuota } from "../mcp/helpers";

const MCP_HEADERS = { accept: "application/json, text/event-stream" };

/** An admin connection to the server (not to the test's own database). */
const admin = () => postgres(POSTGRES_DIRECT_URL ?? POSTGRES_URL!, { max: 1, onnotice: () => {} });
const databaseName = (database: TestDatabase) => new URL(database.url!).pathname.slice(1);

describe("an unavailable database answers 503 with Retry-After, and the first call after it returns succeeds", () => {
  // Through a pooler (DATABASE_DIRECT_URL set) a server that refuses connections is answered by
  // the pooler (its query_wait_timeout and server_login_retry), not by the service.
  test.skipIf(!POSTGRES_URL || !!POSTGRES_DIRECT_URL)("PostgreSQL: connections refused and backends terminated", async () => {
    const t = await createTestApp();
    const owner = await registerClinic(t);
    const key = await createKey(owner);
    const name = databaseName(t.database);
    const sql = admin();
    try {
      await sql.unsafe(`alter database ${name} allow_connections false`);
      await sql.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()`, [name]);
      const rest = await owner.as<ErrorBody>("GET", "/api/v1/tutors");
      expect(rest.status, rest.text).toBe(503);
      expect(rest.body.code).toBe("SERVICE_UNAVAILABLE");
      expect(rest.headers.get("retry-after")).toBe("1");
      const write = await owner.as("POST", "/api/v1/tutors", { json: { name: "Not written" } });
      expect(write.status, write.text).toBe(503);
      const rpc = await t.request("POST", "/mcp", {
        token: key.api_key,
        headers: MCP_HEADERS,
        json: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get_clinic_context", arguments: {} } },
      });
      expect(rpc.status, rpc.text).toBe(503);
      expect(rpc.body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32000, data: { code: "SERVICE_UNAVAILABLE" } } });
      expect(rpc.headers.get("retry-after")).toBe("1");
    } finally {
      await sql.unsafe(`alter database ${name} allow_connections true`);
      await sql.end();
    }
    const after = await owner.as<CursorPageBody<TutorView>>("GET", "/api/v1/tutors");
    expect(after.status, after.text).toBe(200);
    expect(after.body.data.map((x: { name: string }) => x.name)).not.toContain("Not written");
    expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    await t.close();
  }, 30_000);

  test("a closed database (either kind) is 503 on REST and on /invoke", async () => {
    const t = await createTestApp();
    const owner = await registerClinic(t);
    const key = await createKey(owner);
    await t.context.mcp.flush();
    await t.database.close();
    const rest = await owner.as<ErrorBody>("GET", "/api/v1/patients");
    expect(rest.status, rest.text).toBe(503);
    expect(rest.body.code).toBe("SERVICE_UNAVAILABLE");
    const tool = await invoke(t, key.api_key, "get_clinic_context");
    expect([503], tool.text).toContain(tool.status);
    await t.context.lifecycle.beforeClose();
  });
});

describe.skipIf(!POSTGRES_URL)("a revoked key stays revoked while an instance's listener is down", () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let owner: ClinicSession;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await createTestApp({ database });
    // A second instance: its own connections, pool and listener to the same database.
    const second = Object.assign(await openDatabase({ databaseUrl: database.url, databaseDirectUrl: database.directUrl, dataDir: "/nonexistent" }), { url: database.url, destroy: async () => {} });
    b = await createTestApp({ database: second });
    await Promise.all([a.context.mcp.ready, b.context.mcp.ready]);
    owner = await registerClinic(a);
  });
  afterAll(async () => {
    await b.close();
    await b.database.close();
    await a.close();
    await database.destroy();
  });

  test("kill B's listener backend while connections are refused, revoke through A: B refuses on the very next call; caching resumes when it is back", async () => {
    const key = await createKey(owner);
    expect((await invoke(b, key.api_key, "get_clinic_context")).status).toBe(200); // cached on B
    expect(b.context.mcp.keys.cacheActive).toBe(true);
    const name = databaseName(database);
    const sql = admin();
    try {
      await sql.unsafe(`alter database ${name} allow_connections false`);
      const killed = await sql.unsafe(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [b.context.mcp.keys.listenerName!]);
      expect(killed.length).toBe(1);
      // The kill reaches B as its listener connection closing; nothing else is awaited.
      while (b.context.mcp.keys.cacheActive) await Bun.sleep(5);
      expect(b.logLines.join("\n")).toContain("api key cache off");
      const revoked = await a.request("DELETE", `/api/v1/mcp/keys/${key.id}`, { token: owner.token });
      expect(revoked.status, revoked.text).toBe(204);
      const next = await invoke<ErrorBody>(b, key.api_key, "get_clinic_context");
      expect(next.status, next.text).toBe(401);
      expect(next.body.code).toBe("API_KEY_REVOKED");
    } finally {
      await sql.unsafe(`alter database ${name} allow_connections true`);
      await sql.end();
    }
    await b.context.mcp.keys.whenListening();
    expect(b.context.mcp.keys.cacheActive as boolean).toBe(true);
    expect(b.logLines.join("\n")).toContain("api key cache on");
    const other = await createKey(owner);
    expect((await invoke(b, other.api_key, "get_clinic_context")).status).toBe(200);
    // The revoked key stays refused after the cache is back (it starts empty).
    expect((await invoke(b, key.api_key, "get_clinic_context")).status).toBe(401);
  }, 30_000);
});

describe("quota counts and usage rows are written in one transaction", () => {
  test("a flush that fails half way writes neither; the next writes both, in agreement", async () => {
    const t = await createTestApp();
    const owner = await registerClinic(t);
    const key = await createKey(owner);
    await t.context.mcp.flush();
    for (let i = 0; i < 3; i++) expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
    // The usage insert fails after the quota upsert ran, as a lost connection would.
    await t.database.query(`create function refuse_usage() returns trigger language plpgsql as $$
      begin raise exception 'connection lost' using errcode = '08006'; end $$`);
    await t.database.query("create trigger refuse_usage before insert on mcp_usage_log for each row execute function refuse_usage()");
    await expect(t.context.mcp.flush()).rejects.toThrow();
    expect(await storedQuota(t, key.id)).toBe(0);
    const [{ n: before }] = (await t.database.query<{ n: number }>("select count(*)::int as n from mcp_usage_log where api_key_id = $1", [key.id])) as [{ n: number }];
    expect(before).toBe(0);
    await t.database.query("drop trigger refuse_usage on mcp_usage_log");
    await t.context.mcp.flush();
    const [{ n: after }] = (await t.database.query<{ n: number }>("select count(*)::int as n from mcp_usage_log where api_key_id = $1", [key.id])) as [{ n: number }];
    expect([await storedQuota(t, key.id), after]).toEqual([3, 3]);
    await t.close();
  });
});
