import { describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { EventView } from "../../src/modules/audit/service";
import { sql } from "drizzle-orm";
import { rowsOf } from "../../src/db/client";
import { tutors } from "../../src/db/schema";
import type { TestApp } from "../helpers/app";
import { addMember, PASSWORD, relogin, uniqueEmail, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { rfc3339 } from "../../src/lib/time";
import { emitted, pay, tutorFor } from "../billing/helpers";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, other } = made), { otherClinic: true });

const audit = async (query = "") => {
  const r = await owner.as<CursorPageBody<EventView>>("GET", `/api/v1/audit${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
};
const eventsOf = (entityId: string) => audit(`?entity_id=${entityId}`);

describe("the event log", () => {
  test("a change records who made it, what and the fields, in the clinic's log only", async () => {
    const created = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Ana Pérez", phone: "+56911111111" } });
    const [event] = await eventsOf(created.body.id);
    expect(event).toMatchObject({
      action: "tutor.created",
      actor: { type: "user", id: owner.user.id, name: "Owner" },
      entity: { type: "tutor", id: created.body.id },
      occurred_at: rfc3339(t.clock.now()),
    });
    expect(event!.changes).toMatchObject({ name: { to: "Ana Pérez" }, phone: { to: "+56911111111" } });
    expect(event!.request_id).toBeString();
    const theirs = await other.as<CursorPageBody<EventView>>("GET", `/api/v1/audit?entity_id=${created.body.id}`);
    expect(theirs.body.data).toEqual([]);
  });

  test("an update records only what changed; an update that changes nothing records nothing", async () => {
    const id = await tutorFor(owner, "Before");
    t.clock.advance(1000);
    expect((await owner.as("PATCH", `/api/v1/tutors/${id}`, { json: { name: "After" } })).status).toBe(200);
    t.clock.advance(1000);
    expect((await owner.as("PATCH", `/api/v1/tutors/${id}`, { json: { name: "After" } })).status).toBe(200);
    const events = await eventsOf(id);
    expect(events.map((e) => e.action)).toEqual(["tutor.updated", "tutor.created"]);
    expect(events[0]!.changes).toEqual({ name: { from: "Before", to: "After" } });
    expect((await owner.as("DELETE", `/api/v1/tutors/${id}`)).status).toBe(204);
    expect((await eventsOf(id))[0]!.action).toBe("tutor.deleted");
  });

  test("a change that rolls back leaves no event", async () => {
    const before = await t.count("events");
    const tutorsBefore = await t.count("tutors");
    const id = Bun.randomUUIDv7();
    const failed = t.database.changeContexts.run({ actor: { type: "system", id: null, name: "test" } }, () =>
      t.database.db.transaction(async (tx) => {
        const now = t.clock.now();
        await tx.insert(tutors).values({ id, clinic_id: owner.clinic.id, name: "Gone", created_at: now, updated_at: now });
        throw new Error("roll back");
      }),
    );
    expect(failed).rejects.toThrow("roll back");
    await failed.catch(() => {});
    expect(await t.count("events")).toBe(before);
    expect(await t.count("tutors")).toBe(tutorsBefore);
  });

  test("changes outside a request are the system's", async () => {
    const id = Bun.randomUUIDv7();
    const now = t.clock.now();
    await t.database.db.insert(tutors).values({ id, clinic_id: owner.clinic.id, name: "Imported", created_at: now, updated_at: now });
    expect((await eventsOf(id))[0]).toMatchObject({ action: "tutor.created", actor: { type: "system", id: null } });
  });

  test("password hashes never appear: only that the field was set", async () => {
    const email = uniqueEmail("vet");
    const created = await owner.as<{ id: string }>("POST", "/api/v1/users", { json: { email, name: "Vet", role: "vet", password: PASSWORD } });
    expect(created.status, created.text).toBe(201);
    const [event] = await eventsOf(created.body.id);
    expect(event).toMatchObject({ action: "user.created", changes: { email: { to: email }, role: { to: "vet" }, password_hash: { redacted: true } } });
    const [{ hash }] = (await t.database.query<{ hash: string }>("select password_hash as hash from users where id = $1", [created.body.id])) as [{ hash: string }];
    const all = await t.database.query("select * from events");
    expect(JSON.stringify(all)).not.toContain(hash);
    expect(JSON.stringify(all)).not.toContain(PASSWORD);
  });

  test("state changes name their action: invoice.emitted, payment.created, invoice.paid, user.role_changed", async () => {
    const invoice = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await pay(owner, invoice.id, 1_190)).status).toBe(201);
    expect((await eventsOf(invoice.id)).map((e) => e.action)).toEqual(["invoice.paid", "invoice.emitted", "invoice.created"]);
    expect((await audit("?action=payment.created&limit=1"))[0]!.changes).toMatchObject({ amount: { to: 1_190 }, invoice_id: { to: invoice.id } });
    const vet = await addMember(t, owner, "vet");
    expect((await owner.as("PATCH", `/api/v1/users/${vet.user.id}`, { json: { role: "staff" } })).status).toBe(200);
    expect((await eventsOf(vet.user.id))[0]).toMatchObject({ action: "user.role_changed", changes: { role: { from: "vet", to: "staff" } } });
  });

  test("filters: action list, entity type, actor, days; newest first with a cursor", async () => {
    const a = await tutorFor(owner, "Filter A");
    t.clock.advance(86_400_000 * 3);
    owner = await relogin(t, owner);
    const b = await tutorFor(owner, "Filter B");
    const ids = (await audit("?action=tutor.created,tutor.updated&entity_type=tutor&limit=200")).map((e) => e.entity.id);
    expect(ids.indexOf(b)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(b)).toBeLessThan(ids.indexOf(a));
    const today = t.clock.now().toISOString().slice(0, 10);
    expect((await audit(`?action=tutor.created&date_from=${today}&date_to=${today}`)).map((e) => e.entity.id)).toEqual([b]);
    expect((await audit(`?actor_id=${owner.user.id}&limit=1`)).length).toBe(1);
    const first = await owner.as<CursorPageBody<EventView>>("GET", "/api/v1/audit?limit=1");
    const next = await owner.as<CursorPageBody<EventView>>("GET", `/api/v1/audit?limit=1&cursor=${first.body.next_cursor}`);
    expect(next.body.data[0]!.occurred_at <= first.body.data[0]!.occurred_at).toBe(true);
    expect(next.body.data[0]!.id).not.toBe(first.body.data[0]!.id);
    expect((await owner.as("GET", "/api/v1/audit?action=DROP")).status).toBe(422);
  });

  test("the actor's name is recorded as given, quotes, backslashes and all (a NUL or half a surrogate pair, which the database cannot hold, is dropped or replaced)", async () => {
    const id = Bun.randomUUIDv7();
    const name = `O'Brien \\ "quoted" \\' $$ 🐾 '); drop table tutors; -- E'\\' \u0000end`;
    await t.database.changeContexts.run({ actor: { type: "system", id: null, name }, requestId: "req'\\1" }, async () => {
      const now = t.clock.now();
      await t.database.db.insert(tutors).values({ id, clinic_id: owner.clinic.id, name: "Named", created_at: now, updated_at: now });
    });
    expect((await eventsOf(id))[0]).toMatchObject({ actor: { type: "system", name: name.replace("\u0000", "") }, request_id: "req'\\1" });
    const halfPair = Bun.randomUUIDv7();
    await t.database.changeContexts.run({ actor: { type: "system", id: null, name: "half \ud800 pair" } }, async () => {
      const now = t.clock.now();
      await t.database.db.insert(tutors).values({ id: halfPair, clinic_id: owner.clinic.id, name: "Named", created_at: now, updated_at: now });
    });
    expect((await eventsOf(halfPair))[0]!.actor.name).toBe("half \ufffd pair");
    expect(await t.count("tutors")).toBeGreaterThan(0);
  });

  test("events written before the trigger kept old and new values apart read as they were written", async () => {
    const id = Bun.randomUUIDv7();
    await t.database.query(
      `insert into events (id, clinic_id, occurred_at, actor_type, action, entity_type, entity_id, changes) values ($1, $2, now(), 'system', 'tutor.updated', 'tutor', $1, $3)`,
      [id, owner.clinic.id, JSON.stringify({ name: { from: "Old", to: "New" }, password_hash: { redacted: true } })],
    );
    expect((await eventsOf(id))[0]!.changes).toEqual({ name: { from: "Old", to: "New" }, password_hash: { redacted: true } });
  });

  test("each audited table's trigger knows its sensitive columns as they are now; a column added without attaching again is caught", async () => {
    // The trigger is given the table's sensitive columns when attached (audit_attach); a column
    // added later must be attached again, or its values would be recorded.
    const stale = "select tgrelid::regclass::text as name from pg_trigger where tgname = 'audit_change' and split_part(encode(tgargs, 'escape'), '\\000', 5) <> audit_sensitive_columns(tgrelid)::text";
    expect(await t.database.query(stale)).toEqual([]);
    let staleAfterAdding: unknown[] = [];
    await t.database.db
      .transaction(async (tx) => {
        await tx.execute(sql`alter table tutors add column api_token text`);
        staleAfterAdding = [...rowsOf(await tx.execute(sql.raw(stale)))];
        tx.rollback();
      })
      .catch(() => {});
    expect(staleAfterAdding).toEqual([{ name: "tutors" }]);
    expect(await t.database.query(stale)).toEqual([]);
  });

  test("only the owner reads the audit trail", async () => {
    const vet = await addMember(t, owner, "vet");
    expect((await vet.as("GET", "/api/v1/audit")).status).toBe(403);
  });

  test("every clinic table records its changes, or is listed here as not a change of the clinic's records", async () => {
    const notAudited = ["refresh_tokens", "idempotency_keys", "quota_counters", "quota_burst_seconds", "oauth_authorization_codes", "oauth_tokens", "mcp_usage_log", "events", "webhook_deliveries", "webhook_attempts", "invoice_items", "folio_counters"];
    const rows = await t.database.query<{ table_name: string; audited: boolean }>(
      `select c.table_name, exists (select 1 from information_schema.triggers tr where tr.event_object_table = c.table_name and tr.trigger_name = 'audit_change') as audited
       from information_schema.columns c join information_schema.tables tb on tb.table_schema = c.table_schema and tb.table_name = c.table_name and tb.table_type = 'BASE TABLE'
       where c.table_schema = 'public' and c.column_name = 'clinic_id' group by c.table_name`,
    );
    const missing = rows.filter((r) => !r.audited && !notAudited.includes(r.table_name)).map((r) => r.table_name);
    expect(missing).toEqual([]);
  });
});
