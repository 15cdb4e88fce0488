/**
 * Backups of a serving app: consistent under concurrent writes, restorable with every invariant
 * intact, verified when read, and kept to BACKUP_KEEP. A round trip through the other kind of
 * database keeps every row, so keys, folios and idempotency records keep working after a move.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DamagedBackupError, readBackup } from "../../src/backup/format";
import { loadSnapshot, takeSnapshot, type Snapshot } from "../../src/backup/snapshot";
import { BackupStore } from "../../src/backup/store";
import { openDatabase, type Database } from "../../src/db/client";
import { HOUR } from "../../src/lib/clock";
import type { SessionView } from "../../src/modules/auth/model";
import type { BackupListView, BackupTakenView } from "../../src/modules/backups/model";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { TutorView } from "../../src/modules/tutors/model";
import { createTestApp, type ErrorBody, type TestApp } from "../helpers/app";
import { PASSWORD, registerClinic, relogin, sessionFrom, type ClinicSession } from "../helpers/clinic";
import { makeIssuer } from "../billing/sii-fixtures";
import { createEmptyPgliteDatabase, createTestDatabase, databaseKind, POSTGRES_URL } from "../helpers/database";
import { createKey, invoke } from "../mcp/helpers";

const dir = mkdtempSync(join(tmpdir(), "vet-backups-"));
let t: TestApp;
let owner: ClinicSession;
beforeAll(async () => {
  t = await createTestApp({ config: { backup: { dir, intervalMs: 6 * HOUR, keep: 3 } } });
  owner = await registerClinic(t);
  // Boletas need a CAF and a certificate; their keys travel encrypted in backups and open again after a move.
  await makeIssuer(owner, [39]);
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const saleKey = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** One sale: an invoice with items, emitted, paid in full, with its boleta. Resolves when all four are acknowledged. */
async function sale(session: ClinicSession, tutorId: string, n: number) {
  const invoice = await session.as<InvoiceView>("POST", "/api/v1/billing/invoices", { json: { tutor_id: tutorId, items: [{ description: `Consulta ${n}`, quantity: 1 + (n % 3), unit_price: 10_000 + n }] } });
  expect(invoice.status, invoice.text).toBe(201);
  const emitted = await session.as<InvoiceView>("POST", `/api/v1/billing/invoices/${invoice.body.id}/emit`);
  expect(emitted.status, emitted.text).toBe(200);
  const paid = await session.as("POST", "/api/v1/billing/payments", { json: { invoice_id: invoice.body.id, amount: emitted.body.total_amount, method: "card" }, headers: { "idempotency-key": saleKey(n) } });
  expect(paid.status, paid.text).toBe(201);
  const boleta = await session.as("POST", "/api/v1/billing/sii/documents", { json: { doc_type: 39, invoice_id: invoice.body.id } });
  expect(boleta.status, boleta.text).toBe(201);
  return invoice.body.id;
}

/** The payment body `sale` sent for an invoice (a replay must repeat it exactly). */
async function paymentOf(database: Database, invoiceId: string) {
  const [row] = await database.query<{ total: number }>("select total_amount::int as total from invoices where id = $1", [invoiceId]);
  return { invoice_id: invoiceId, amount: Number(row!.total), method: "card" };
}

/** The invariants a restored database must satisfy, as one list of violations (empty when all hold). */
async function violations(database: Database, clinicId: string): Promise<string[]> {
  const found: string[] = [];
  const check = async (label: string, sql: string) => {
    const rows = await database.query(sql, [clinicId]);
    if (rows.length) found.push(`${label}: ${JSON.stringify(rows).slice(0, 300)}`);
  };
  await check("invoice totals", `select i.id from invoices i where i.clinic_id = $1 and (i.net_amount <> coalesce((select sum(total_amount) from invoice_items where invoice_id = i.id), 0) or i.total_amount <> i.net_amount + i.tax_amount)`);
  await check("balances", `select i.id from invoices i where i.clinic_id = $1 and i.paid_amount <> coalesce((select sum(amount - refunded_amount) from payments where invoice_id = i.id), 0)`);
  await check("invoices without items", `select i.id from invoices i where i.clinic_id = $1 and not exists (select 1 from invoice_items where invoice_id = i.id)`);
  await check("folios gapless", `select doc_type from tax_documents where clinic_id = $1 group by doc_type having max(folio) <> count(*)`);
  await check("folio counters", `select f.doc_type from folio_counters f where f.clinic_id = $1 and f.last_folio <> (select max(folio) from tax_documents d where d.clinic_id = $1 and d.doc_type = f.doc_type)`);
  return found;
}

describe("a backup taken while sales are being written", () => {
  let acknowledged: string[];
  let backup: BackupTakenView;
  let snapshot: Snapshot;

  beforeAll(async () => {
    const tutor = await owner.as<TutorView>("POST", "/api/v1/tutors", { json: { name: "Concurrent tutor" } });
    acknowledged = [];
    let n = 0;
    const writer = async (rounds: number) => {
      for (let i = 0; i < rounds; i++) acknowledged.push(await sale(owner, tutor.body.id, n++));
    };
    const first = Promise.all([writer(3), writer(3), writer(3)]);
    await first;
    const before = [...acknowledged];
    // Writers keep going while the backup runs.
    const during = Promise.all([writer(4), writer(4), writer(4)]);
    if (databaseKind === "pglite") {
      const taken = await owner.as<BackupTakenView>("POST", "/api/v1/admin/backups");
      expect(taken.status, taken.text).toBe(201);
      backup = taken.body;
      ({ snapshot } = readBackup(readFileSync(join(dir, backup.file)), JSON.parse(readFileSync(join(dir, `${backup.file}.manifest.json`), "utf8"))));
    } else {
      // PostgreSQL servers leave backups to their operator; `move --from` reads them the same way.
      snapshot = await takeSnapshot(t.database);
    }
    await during;
    acknowledged = before;
  }, 60_000);

  test("restores into an empty database with every invariant intact and every sale acknowledged before it began", async () => {
    const target = await createTestDatabase();
    try {
      await loadSnapshot(target, snapshot);
      expect(await violations(target, owner.clinic.id)).toEqual([]);
      const restored = new Set((await target.query<{ id: string }>("select id from invoices where clinic_id = $1", [owner.clinic.id])).map((row) => row.id));
      for (const id of acknowledged) expect(restored.has(id), id).toBe(true);
      expect(await violations(t.database, owner.clinic.id)).toEqual([]);
    } finally {
      await target.destroy();
    }
  });

  test.if(databaseKind === "pglite")("the list shows it with its size, checksum, schema version and per-table counts; the file's digest matches", async () => {
    const listed = await owner.as<BackupListView>("GET", "/api/v1/admin/backups");
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toMatchObject({ enabled: true, dir, interval_ms: 6 * HOUR, keep: 3 });
    const entry = listed.body.backups.find((b) => b.file === backup.file);
    expect(entry).toMatchObject({ size_bytes: backup.size_bytes, sha256: backup.sha256, schema_version: backup.schema_version });
    expect(new Bun.CryptoHasher("sha256").update(readFileSync(join(dir, backup.file))).digest("hex")).toBe(backup.sha256);
    expect(entry!.tables.find((table: { name: string }) => table.name === "invoices")!.rows).toBeGreaterThanOrEqual(acknowledged.length);
  });
});

describe.if(databaseKind === "pglite")("backup files", () => {
  test("retention keeps exactly BACKUP_KEEP, the newest", async () => {
    const taken: string[] = [];
    for (let i = 0; i < 5; i++) {
      t.clock.advance(61_000);
      taken.push((await owner.as<BackupTakenView>("POST", "/api/v1/admin/backups")).body.file);
    }
    const listed = (await owner.as<BackupListView>("GET", "/api/v1/admin/backups")).body.backups.map((b) => b.file);
    expect(listed).toEqual(taken.slice(-3).reverse());
  });

  test("the schedule takes a backup once an interval has passed since the newest, and not before", async () => {
    const scheduler = t.context.backups!;
    const newest = () => (scheduler.store.list()[0]?.created_at ?? "");
    const before = newest();
    t.clock.advance(5 * HOUR);
    expect(await scheduler.tick()).toBe(false);
    t.clock.advance(HOUR + 1000);
    expect(await scheduler.tick()).toBe(true);
    expect(newest() > before).toBe(true);
    // BACKUP_KEEP manual ones and the scheduled one: each kind is pruned apart.
    expect(scheduler.store.list().map((b) => b.trigger)).toEqual(["scheduled", "manual", "manual", "manual"]);
  });

  test("manual backups: one a minute (429 with Retry-After), and however many are taken, the scheduled ones stay", async () => {
    const scheduled = () => t.context.backups!.store.list().filter((b) => b.trigger === "scheduled").map((b) => b.file);
    const before = scheduled();
    expect(before.length).toBeGreaterThan(0);
    t.clock.advance(61_000);
    owner = await relogin(t, owner);
    expect((await owner.as("POST", "/api/v1/admin/backups")).status).toBe(201);
    const again = await owner.as<ErrorBody>("POST", "/api/v1/admin/backups");
    expect(again.status, again.text).toBe(429);
    expect(again.body.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
    for (let i = 0; i < 7; i++) {
      t.clock.advance(61_000);
      expect((await owner.as("POST", "/api/v1/admin/backups")).status).toBe(201);
    }
    owner = await relogin(t, owner);
    expect(scheduled()).toEqual(before);
  });

  test("one at a time: a manual backup asked for while one is written is refused (409)", async () => {
    t.clock.advance(61_000);
    const first = t.context.backups!.takeManual();
    // Asked for before the first has finished (no minute has to pass for this refusal).
    await expect(t.context.backups!.takeManual()).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("being written") });
    expect((await first).trigger).toBe("manual");
  });

  test.each([
    ["truncated", (bytes: Uint8Array) => bytes.slice(0, Math.floor(bytes.length / 2)), "SHA-256 does not match"],
    ["edited", (bytes: Uint8Array) => { const copy = bytes.slice(); copy[copy.length - 20]! ^= 0xff; return copy; }, "SHA-256 does not match"],
  ])("a %s file is refused before anything is written, with its manifest beside it", (_label, damage, message) => {
    const [latest] = t.context.backups!.store.list();
    const bytes = damage(readFileSync(join(dir, latest!.file)));
    expect(() => readBackup(bytes, latest)).toThrow(message);
  });

  test("without its manifest, a truncated or re-compressed edited file is refused by the checks inside", () => {
    const [latest] = t.context.backups!.store.list();
    const bytes = readFileSync(join(dir, latest!.file));
    expect(() => readBackup(bytes.slice(0, bytes.length - 30))).toThrow(DamagedBackupError);
    const text = new TextDecoder().decode(Bun.gunzipSync(bytes));
    const edited = text.replace(/(COPY public\."tutors"[^\n]*\n[^\t]*\t[^\t]*\t[^\t]*\t[^\t]*\t)([^\t]+)/, "$1Mallory");
    expect(edited).not.toBe(text);
    expect(() => readBackup(Bun.gzipSync(new TextEncoder().encode(edited)))).toThrow("table tutors does not match the manifest");
    const cut = text.slice(0, text.lastIndexOf("-- end of backup"));
    expect(() => readBackup(Bun.gzipSync(new TextEncoder().encode(cut)))).toThrow("cut short");
  });
});

test("a round trip through the other kind of database keeps every row, and keys, folios and idempotency records keep working", async () => {
  // The schedule tests moved the clock past the session's lifetime.
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: { email: owner.user.email, password: PASSWORD } });
  owner = sessionFrom(t, login);
  const key = await createKey(owner, { scopes: ["read", "query"] });
  const tutor = await owner.as<TutorView>("POST", "/api/v1/tutors", { json: { name: "Round trip" } });
  const paidInvoice = await sale(owner, tutor.body.id, 10_000);
  await clinicalRecord(owner, tutor.body.id);
  const original = await takeSnapshot(t.database);
  for (const table of ["clinical_notes", "note_addenda", "vitals", "vaccinations", "prescriptions"]) {
    expect(original.tables.find((copy) => copy.name === table)?.rows, table).toBeGreaterThan(0);
  }
  // Through the other kind: PostgreSQL when the suite runs on PGlite (if one is reachable), PGlite otherwise.
  const other = POSTGRES_URL ? await createEmptyPgliteDatabase() : await createOtherPostgres();
  const back = await createTestDatabase();
  try {
    expect(other, "a PostgreSQL server for the round trip (BACKUP_TEST_POSTGRES or 127.0.0.1:5432)").toBeDefined();
    await loadSnapshot(other!, original);
    await loadSnapshot(back, await takeSnapshot(other!));
    const returned = await takeSnapshot(back);
    expect(returned.tables.map(({ name, rows, sha256 }) => ({ name, rows, sha256 }))).toEqual(original.tables.map(({ name, rows, sha256 }) => ({ name, rows, sha256 })));
    const moved = await createTestApp({ database: back, clock: t.clock });
    try {
      const call = await invoke(moved, key.api_key, "query_database", { sql: "select count(*) as n from tax_documents" });
      expect(call.status, call.text).toBe(200);
      const session = { ...owner, as: (method: string, path: string, opts = {}) => moved.request(method, path, { token: owner.token, ...opts }) } as ClinicSession;
      const [last] = await back.query<{ folio: number }>("select max(folio)::int as folio from tax_documents where clinic_id = $1 and doc_type = 39", [owner.clinic.id]);
      const nextInvoice = await sale(session, tutor.body.id, 10_001);
      const [next] = await back.query<{ folio: number }>("select folio from tax_documents where invoice_id = $1", [nextInvoice]);
      expect(next!.folio).toBe(last!.folio + 1);
      const replay = await session.as("POST", "/api/v1/billing/payments", { json: await paymentOf(back, paidInvoice), headers: { "idempotency-key": saleKey(10_000) } });
      expect(replay.headers.get("idempotent-replayed"), replay.text).toBe("true");
    } finally {
      await moved.close();
    }
  } finally {
    await other?.close();
    await back.destroy();
  }
}, 60_000);

/** A patient's clinical record: a signed note with an addendum, vitals, a vaccination and a prescription. */
async function clinicalRecord(session: ClinicSession, tutorId: string) {
  const ok = async (method: string, path: string, json?: unknown) => {
    const r = await session.as<{ id: string }>(method, `/api/v1${path}`, { json });
    expect(r.status, r.text).toBeLessThan(300);
    return r.body.id;
  };
  const patient = await ok("POST", "/patients", { tutor_id: tutorId, name: "Record", species: "dog", weight_grams: 9_000 });
  const visit = await ok("POST", "/visits", { patient_id: patient, scheduled_at: "2026-01-15T12:00:00Z" });
  const note = await ok("POST", `/visits/${visit}/notes`, { assessment: "Sano" });
  await ok("POST", `/notes/${note}/sign`);
  await ok("POST", `/notes/${note}/addenda`, { text: "Sin novedad" });
  await ok("POST", `/patients/${patient}/vaccinations`, { vaccine: "Nobivac Rabies", diseases: ["rabies"], next_due_on: "2027-01-15" });
  await ok("POST", `/patients/${patient}/prescriptions`, { drug: "Meloxicam", dose: "0.1 mg/kg", route: "oral", frequency: "every 24 h" });
}

/** A fresh PostgreSQL database for the PGlite suite's round trip, or undefined when none is reachable. */
async function createOtherPostgres(): Promise<Database | undefined> {
  const url = process.env.BACKUP_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";
  try {
    const { default: postgres } = await import("postgres");
    const name = `vet_move_${Bun.randomUUIDv7().replaceAll("-", "").slice(-16)}`;
    const admin = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 2 });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    const target = new URL(url);
    target.pathname = `/${name}`;
    const database = await openDatabase({ databaseUrl: target.toString(), dataDir: "/nonexistent" });
    const close = database.close;
    return Object.assign(database, {
      url: target.toString(),
      async close() {
        await close();
        const cleanup = postgres(url, { max: 1, onnotice: () => {} });
        await cleanup.unsafe(`drop database if exists ${name} with (force)`);
        await cleanup.end();
      },
    });
  } catch {
    return undefined;
  }
}

test("a backup written under an older schema restores and is brought to this version's schema", async () => {
  const KNOWN = (await import("../../src/db/client")).KNOWN_MIGRATIONS.length;
  // Two empty databases (not the migrated test template): the older one is migrated part way.
  const older = await createEmptyPgliteDatabase();
  const target = await createEmptyPgliteDatabase();
  try {
    await older.migrate(KNOWN - 1);
    await older.query("insert into clinics (id, name, timezone, currency, tax_rate_bps, plan, created_at, updated_at) values ('01900000-0000-7000-8000-0000000000aa', 'Old clinic', 'UTC', 'CLP', 1900, 'standard', now(), now())");
    const snapshot = await takeSnapshot(older);
    expect(snapshot.schemaVersion).toBe(KNOWN - 1);
    await loadSnapshot(target, snapshot);
    expect(await target.query("select name from clinics")).toEqual([{ name: "Old clinic" }]);
    const [applied] = await target.query<{ n: number }>("select count(*)::int as n from drizzle.__drizzle_migrations");
    expect(applied!.n).toBe(KNOWN);
    await expect(target.query("select count(*) from mcp_reports")).resolves.toBeDefined();
  } finally {
    await older.close();
    await target.close();
  }
}, 60_000);

test("a backup from before the clinical record restores with its active vaccine alerts as due items", async () => {
  const { KNOWN_MIGRATIONS } = await import("../../src/db/client");
  const before = KNOWN_MIGRATIONS.findIndex((m) => /^\d+_clinical_record$/.test(m.tag));
  expect(before).toBeGreaterThan(0);
  const older = await createEmptyPgliteDatabase();
  const target = await createEmptyPgliteDatabase();
  const id = (n: number) => `01900000-0000-7000-8000-0000000001${String(n).padStart(2, "0")}`;
  try {
    await older.migrate(before);
    await older.query(`insert into clinics (id, name, timezone, currency, tax_rate_bps, plan, created_at, updated_at) values ('${id(0)}', 'Old clinic', 'America/Santiago', 'CLP', 1900, 'standard', now(), now())`);
    await older.query(`insert into tutors (id, clinic_id, name, phone, created_at, updated_at) values ('${id(1)}', '${id(0)}', 'Ana', '+56912345678', now(), now())`);
    await older.query(`insert into patients (id, clinic_id, tutor_id, name, species, created_at, updated_at) values ('${id(2)}', '${id(0)}', '${id(1)}', 'Rex', 'dog', now(), now())`);
    await older.query(`insert into alerts (id, clinic_id, patient_id, kind, message, status, due_date, created_at, updated_at) values
      ('${id(3)}', '${id(0)}', '${id(2)}', 'vaccine_due', 'Antirrábica anual', 'active', '2026-02-01', now(), now()),
      ('${id(4)}', '${id(0)}', '${id(2)}', 'vaccine_due', 'Óctuple (ya puesta)', 'resolved', '2025-06-01', now(), now()),
      ('${id(5)}', '${id(0)}', '${id(2)}', 'allergy', 'Penicilina', 'active', null, now(), now())`);
    await loadSnapshot(target, await takeSnapshot(older));
    const due = await target.query("select id, patient_id, vaccine, next_due_on::text as next_due_on, given_at, reminder_status from vaccinations");
    expect(due).toEqual([{ id: id(3), patient_id: id(2), vaccine: "Antirrábica anual", next_due_on: "2026-02-01", given_at: null, reminder_status: "pending" }]);
    const alerts = await target.query("select id, status from alerts order by id");
    expect(alerts).toEqual([{ id: id(3), status: "resolved" }, { id: id(4), status: "resolved" }, { id: id(5), status: "active" }]);
  } finally {
    await older.close();
    await target.close();
  }
}, 60_000);

test("a database that is not empty is refused as a target, and keeps what it had", async () => {
  const snapshot = await takeSnapshot(t.database);
  const target = await createTestDatabase();
  try {
    await target.query("insert into clinics (id, name, timezone, currency, tax_rate_bps, plan, created_at, updated_at) values ('01900000-0000-7000-8000-0000000000bb', 'Already here', 'UTC', 'CLP', 1900, 'standard', now(), now())");
    await expect(loadSnapshot(target, snapshot)).rejects.toThrow("not empty");
    expect(await target.query("select name from clinics")).toEqual([{ name: "Already here" }]);
  } finally {
    await target.destroy();
  }
});

test.if(databaseKind === "postgres")("on PostgreSQL the server takes no backups of its own and says why", async () => {
  const taken = await owner.as<ErrorBody>("POST", "/api/v1/admin/backups");
  expect(taken.status, taken.text).toBe(409);
  expect(taken.body.message).toContain("pg_dump");
  const listed = await owner.as("GET", "/api/v1/admin/backups");
  expect(listed.body, listed.text).toMatchObject({ enabled: false, backups: [] });
});

test("a backup file is plain SQL that psql restores into an empty PostgreSQL database, which the service then opens as is", async () => {
  const psql = Bun.which("psql");
  expect(psql, "psql (PostgreSQL's client) on PATH").toBeTruthy();
  const store = new BackupStore(t.database, t.clock, { dir: join(dir, "psql"), intervalMs: null, keep: 1 });
  const backup = await store.backupNow();
  const target = await createOtherPostgres();
  expect(target, "a PostgreSQL server").toBeDefined();
  const url = (target as Database & { url: string }).url;
  try {
    const sql = Bun.gunzipSync(readFileSync(join(dir, "psql", backup.file)));
    const restore = Bun.spawnSync([psql!, "-v", "ON_ERROR_STOP=1", "--single-transaction", "-q", url], { stdin: sql });
    expect(restore.exitCode, restore.stderr.toString()).toBe(0);
    await target!.migrate();
    const read = await takeSnapshot(target!);
    expect(read.schemaVersion).toBe(backup.schema_version);
    expect(read.tables.map(({ name, rows, sha256 }) => ({ name, rows, sha256 }))).toEqual(backup.tables.map(({ name, rows, sha256 }) => ({ name, rows, sha256 })));
  } finally {
    await target?.close();
  }
});
