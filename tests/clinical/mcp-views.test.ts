/** What an assistant reads of the clinical record: signed notes and addenda (never drafts), vitals, vaccinations, prescriptions — its own clinic's only. */
import { expect, test } from "bun:test";
import type { NoteView } from "../../src/modules/notes/model";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedVisit } from "../helpers/protected-routes";
import { createKey, invoke, type QueryResult } from "../mcp/helpers";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, other } = made), { otherClinic: true });

async function record(session: ClinicSession) {
  const visit = await seedVisit(t, session);
  const signed = await session.as<NoteView>("POST", `/api/v1/visits/${visit}/notes`, { json: { assessment: "Otitis", diagnoses: ["otitis externa"] } });
  await session.as("POST", `/api/v1/notes/${signed.body.id}/sign`);
  await session.as("POST", `/api/v1/notes/${signed.body.id}/addenda`, { json: { text: "Cultivo negativo" } });
  const draft = await session.as<NoteView>("POST", `/api/v1/visits/${visit}/notes`, { json: { plan: "borrador privado" } });
  return { signed: signed.body.id, draft: draft.body.id, patient: signed.body.patient_id };
}

test("query_database sees signed notes and addenda but no draft, and nothing of another clinic", async () => {
  const mine = await record(owner);
  const theirs = await record(other);
  await owner.as("POST", `/api/v1/patients/${mine.patient}/vitals`, { json: { weight_grams: 7_000 } });
  await owner.as("POST", `/api/v1/patients/${mine.patient}/vaccinations`, { json: { vaccine: "Nobivac Rabies", diseases: ["rabies"], next_due_on: "2027-01-15" } });
  const key = await createKey(owner, { scopes: ["read", "query"] });
  const query = async (sql: string) => {
    const r = await invoke<QueryResult>(t, key.api_key, "query_database", { sql });
    expect(r.status, r.text).toBe(200);
    return r.body.rows;
  };
  expect(await query("select id, diagnoses from clinical_notes")).toEqual([{ id: mine.signed, diagnoses: ["otitis externa"] }]);
  expect(await query(`select count(*)::int as n from clinical_notes where id in ('${mine.draft}', '${theirs.signed}', '${theirs.draft}')`)).toEqual([{ n: 0 }]);
  expect(await query("select n.id, a.text from note_addenda a join clinical_notes n on n.id = a.note_id")).toEqual([{ id: mine.signed, text: "Cultivo negativo" }]);
  expect(await query("select weight_grams from vitals")).toEqual([{ weight_grams: 7_000 }]);
  expect(await query("select vaccine from vaccinations where 'rabies' = any(diseases)")).toEqual([{ vaccine: "Nobivac Rabies" }]);
  const described = await invoke<{ tables: { name: string }[] }>(t, key.api_key, "describe_schema", {});
  expect(described.body.tables.map((table) => table.name)).toEqual(expect.arrayContaining(["clinical_notes", "note_addenda", "vitals", "vaccinations", "prescriptions"]));
});
