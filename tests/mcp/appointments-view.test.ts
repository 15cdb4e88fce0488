/** The calendar as an assistant reads it: query_database's appointments view, its own clinic's live visits only. */
import { expect, test } from "bun:test";
import type { VisitView } from "../../src/modules/visits/model";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedPatient } from "../helpers/protected-routes";
import { createKey, invoke, type QueryResult } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
let vet: ClinicSession;
useClinicApp((made) => ({ t, owner, other, vet } = made), { otherClinic: true, members: ["vet"] });

const created = async (session: ClinicSession, path: string, json: Record<string, unknown>) => {
  const r = await session.as<{ id: string }>("POST", `/api/v1${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
const book = async (session: ClinicSession, json: Record<string, unknown>) => {
  const r = await session.as<VisitView>("POST", "/api/v1/visits", { json: { patient_id: await seedPatient(t, session), ...json } });
  expect(r.status, r.text).toBe(201);
  return r.body;
};

test("query_database reads appointments: times, length, room, type and its name; no deleted visit and nothing of another clinic", async () => {
  const type = await created(owner, "/appointment-types", { name: "Control", duration_minutes: 20 });
  const room = await created(owner, "/rooms", { name: "Box 2" });
  const typed = await book(owner, { vet_id: vet.user.id, scheduled_at: "2026-01-20T13:00:00Z", appointment_type_id: type, room_id: room, reason: "Cojera" });
  const plain = await book(owner, { scheduled_at: "2026-01-20T14:00:00Z" });
  const deleted = await book(owner, { scheduled_at: "2026-01-20T15:00:00Z" });
  expect((await owner.as("DELETE", `/api/v1/visits/${deleted.id}`)).status).toBe(204);
  const theirs = await book(other, { scheduled_at: "2026-01-20T13:00:00Z", appointment_type_id: await created(other, "/appointment-types", { name: "Ajeno", duration_minutes: 30 }) });
  // A type deleted since keeps its name on the visits booked with it.
  expect((await owner.as("DELETE", `/api/v1/appointment-types/${type}`)).status).toBe(204);

  const key = await createKey(owner, { scopes: ["read", "query"] });
  const query = async (sql: string) => {
    const r = await invoke<QueryResult>(t, key.api_key, "query_database", { sql });
    expect(r.status, r.text).toBe(200);
    return r.body.rows;
  };
  const rows = await query("select id, patient_id, vet_id, room_id, appointment_type_id, appointment_type, status, scheduled_at, ends_at, confirmed_at, created_at, updated_at from appointments order by scheduled_at");
  expect(rows.map((row) => row.id)).toEqual([typed.id, plain.id]);
  expect(rows[0]).toMatchObject({ patient_id: typed.patient_id, vet_id: vet.user.id, room_id: room, appointment_type_id: type, appointment_type: "Control", status: "scheduled", confirmed_at: null });
  expect(rows[1]).toMatchObject({ vet_id: null, room_id: null, appointment_type_id: null, appointment_type: null });
  expect(await query("select extract(epoch from ends_at - scheduled_at)::int / 60 as minutes from appointments order by scheduled_at")).toEqual([{ minutes: 20 }, { minutes: 30 }]);
  expect(await query(`select count(*)::int as n from appointments where id in ('${deleted.id}', '${theirs.id}')`)).toEqual([{ n: 0 }]);
  // Joined with the other views by id; the clinical fields stay in visits.
  expect(await query("select a.appointment_type, v.reason from appointments a join visits v on v.id = a.id where a.room_id is not null")).toEqual([{ appointment_type: "Control", reason: "Cojera" }]);
  const refused = await invoke<{ code: string }>(t, key.api_key, "query_database", { sql: "select reason from appointments" });
  expect(refused.status, refused.text).toBe(400);

  const described = await invoke<{ tables: { name: string; columns: { name: string }[] }[] }>(t, key.api_key, "describe_schema", {});
  expect(described.body.tables.find((table) => table.name === "appointments")?.columns.map((c) => c.name)).toEqual(["id", "patient_id", "vet_id", "room_id", "appointment_type_id", "appointment_type", "status", "scheduled_at", "ends_at", "confirmed_at", "created_at", "updated_at"]);
});
