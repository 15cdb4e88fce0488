/** One MCP call, or one bad row, must never break the usage log for every clinic. */
import { beforeAll, describe, expect, test } from "bun:test";
import { newId } from "../../src/lib/crypto";
import { storableText, SQL_TEXT_LIMIT, UsageLog } from "../../src/modules/mcp/usage-log";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { createTestDatabase } from "../helpers/database";
import { createKey, invoke, usageRows, type CreatedKey } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let a: ClinicSession;
let b: ClinicSession;
let keyA: CreatedKey;
let keyB: CreatedKey;

useClinicApp((made) => ({ t, owner: a, other: b } = made), { otherClinic: true });
beforeAll(async () => {
  keyA = await createKey(a);
  keyB = await createKey(b);
});

describe("storable text", () => {
  test("NUL stays visible, lone surrogates become U+FFFD, and a cut never splits a pair", () => {
    expect(storableText("a\u0000b", 10)).toBe("a\u2400b");
    expect(storableText("a\ud800b", 10)).toBe("a\ufffdb");
    const emojiAcrossTheCut = "x".repeat(SQL_TEXT_LIMIT - 1) + "🐕" + "tail";
    const stored = storableText(emojiAcrossTheCut, SQL_TEXT_LIMIT);
    expect(stored.isWellFormed()).toBe(true);
    expect(stored).toBe("x".repeat(SQL_TEXT_LIMIT - 1));
  });
});

describe("a statement longer than the stored limit with an emoji across the cut", () => {
  test("is logged cut on a code point, and every clinic's usage keeps working", async () => {
    const padding = "x".repeat(SQL_TEXT_LIMIT - "select '".length - 1);
    const sql = `select '${padding}🐕🐕' as long_text`;
    const r = await invoke(t, keyA.api_key, "query_database", { sql });
    expect(r.status, r.text).toBe(200);
    const rows = await usageRows(t, keyA.id);
    const logged = rows.at(-1)!.sql_text!;
    expect(logged.isWellFormed()).toBe(true);
    expect(logged.length).toBeLessThanOrEqual(SQL_TEXT_LIMIT);
    const other = await b.as("GET", "/api/v1/mcp/usage");
    expect(other.status, other.text).toBe(200);
    await invoke(t, keyB.api_key, "clinic_context");
    expect((await usageRows(t, keyB.id)).length).toBeGreaterThan(0);
  });
});

describe("rows the database refuses", () => {
  test("bad text is stored safely and a refused row is isolated: the good rows are written, the loss counted and logged once without SQL", async () => {
    const database = await createTestDatabase();
    try {
      const lines: string[] = [];
      const log = new UsageLog((reason) => lines.push(reason));
      const goodBefore = await database.query<{ n: number }>("select count(*)::int as n from mcp_usage_log");
      const clinic = await database.query<{ id: string }>(
        "insert into clinics (id, name, timezone, currency, tax_rate_bps, plan, created_at, updated_at) values ($1, 'C', 'UTC', 'CLP', 1900, 'standard', now(), now()) returning id",
        [newId()],
      );
      const clinicId = clinic[0]!.id;
      const [key] = await database.query<{ id: string }>(
        "insert into api_keys (id, clinic_id, name, key_hash, key_prefix, scopes, rate_limit_per_day, created_at, updated_at) values ($1, $2, 'k', $3, 'svc_abcd', '{read}', 10, now(), now()) returning id",
        [newId(), clinicId, "f".repeat(64)],
      );
      const good = { clinicId, apiKeyId: key!.id, tool: "query_database", statusCode: 200, outcome: "ok" as const, durationMs: 1, requestId: null, at: new Date() };
      log.record({ ...good, sqlText: "select 'secret-good-1'" });
      log.record({ ...good, tool: "bad\u0000tool", sqlText: "select '\u0000' -- \ud800" });
      // A duration past the column's integer range: the database refuses this row in any form.
      log.record({ ...good, durationMs: 1e12, sqlText: "select 'secret-refused-row'" });
      log.record({ ...good, sqlText: "select 'secret-good-2'" });
      await database.copyTransaction("write", (session) => log.insert(session, log.take().lines));
      const rows = await database.query<{ tool: string; sql_text: string | null }>("select tool, sql_text from mcp_usage_log order by created_at, id");
      expect(rows.length - goodBefore[0]!.n).toBe(3);
      expect(rows.map((r) => r.sql_text)).toContain("select '\u2400' -- \ufffd");
      expect(rows.map((r) => r.tool)).toContain("bad\u2400tool");
      expect(log.dropped).toBe(1);
      expect(log.pending).toBe(0);
      expect(lines).toHaveLength(1);
      expect(lines.join("\n")).not.toContain("secret");
    } finally {
      await database.destroy();
    }
  });

  test("a batch that fails because the database is gone is kept whole, and the final flush at shutdown logs a count, never rows", async () => {
    const app = await createTestApp({ config: { logLevel: "debug" } });
    const owner = await registerClinic(app);
    const key = await createKey(owner);
    await app.context.mcp.flush();
    await invoke(app, key.api_key, "query_database", { sql: "select 'secret-statement-text' as s" });
    expect(app.context.mcp.usage.pending).toBe(1);
    await app.database.destroy();
    await app.context.lifecycle.beforeClose();
    const log = app.logLines.join("\n");
    expect(log).toContain("final mcp flush failed");
    expect(log).toContain('"unwritten_rows":1');
    expect(log).not.toContain("secret-statement-text");
  });
});
