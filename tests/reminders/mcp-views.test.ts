/** What an assistant reads of reminders and consents: its own clinic's messages and consents, not where a message went. */
import { expect, test } from "bun:test";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey, invoke, type QueryResult } from "../mcp/helpers";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, other } = made), { otherClinic: true });

async function consentedTutor(session: ClinicSession, email: string) {
  const tutor = await session.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Ana", email } });
  await session.as("POST", `/api/v1/tutors/${tutor.body.id}/consents`, { json: { channel: "email", purpose: "reminders", granted: true, evidence: "dijo que sí" } });
  await session.as("POST", `/api/v1/tutors/${tutor.body.id}/consents`, { json: { channel: "email", purpose: "marketing", granted: false } });
  return tutor.body.id;
}

test("query_database reads consents and the outbox of its own clinic, without recipients", async () => {
  const mine = await consentedTutor(owner, "mine@example.test");
  await consentedTutor(other, "theirs@example.test");
  const key = await createKey(owner, { scopes: ["read", "query"] });
  const query = async (sql: string) => {
    const r = await invoke<QueryResult>(t, key.api_key, "query_database", { sql });
    expect(r.status, r.text).toBe(200);
    return r.body.rows;
  };
  expect(await query("select tutor_id, purpose, granted, source from consent_records order by purpose")).toEqual([
    { tutor_id: mine, purpose: "marketing", granted: false, source: "console" },
    { tutor_id: mine, purpose: "reminders", granted: true, source: "console" },
  ]);
  expect(await query("select purpose, status from tutor_consents order by purpose")).toEqual([
    { purpose: "marketing", status: "withdrawn" },
    { purpose: "reminders", status: "granted" },
  ]);
  expect(await query("select count(*)::int as n from reminder_messages")).toEqual([{ n: 0 }]);
  const recipient = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: "select recipient from reminder_messages" });
  expect(recipient.status).not.toBe(200);
  const evidence = await invoke<QueryResult>(t, key.api_key, "query_database", { sql: "select evidence from consent_records" });
  expect(evidence.status).not.toBe(200);
});
