/**
 * Consultation notes: who writes and reads them, drafts private to their author and the owner,
 * signing makes a note final (409 NOTE_SIGNED after), corrections are addenda, and two signers
 * racing get one 200 and one 409 — on both databases.
 */
import { expect, test } from "bun:test";
import type { BoardVisitView } from "../../src/modules/operations/model";
import type { AddendumView, NoteView } from "../../src/modules/notes/model";
import type { CursorPageBody } from "../../src/http/pagination";
import type { Answer, ErrorBody, TestApp } from "../helpers/app";
import { addMember, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedVisit } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
let staff: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, vet, staff, other } = made), { otherClinic: true, members: ["vet", "staff"] });

const soap = { subjective: "Vómitos hace 2 días", objective: "T° 39.4, mucosas rosadas", assessment: "Gastroenteritis aguda", plan: "Dieta blanda, control en 5 días", diagnoses: ["gastroenteritis"] };

async function draft(author: ClinicSession, body: Record<string, unknown> = soap) {
  const visit = await seedVisit(t, owner);
  const r = await author.as<NoteView>("POST", `/api/v1/visits/${visit}/notes`, { json: body });
  expect(r.status, r.text).toBe(201);
  return { visit, note: r.body };
}

test("a vet writes a draft; staff cannot write notes (403) and nothing is written", async () => {
  const { note } = await draft(vet);
  expect(note).toMatchObject({ status: "draft", author_id: vet.user.id, signed_at: null, signed_by: null, addenda: [], diagnoses: ["gastroenteritis"] });
  const visit = await seedVisit(t, owner);
  const before = await t.count("clinical_notes");
  const refused = await staff.as<ErrorBody>("POST", `/api/v1/visits/${visit}/notes`, { json: soap });
  expect(refused.status, refused.text).toBe(403);
  expect(await t.count("clinical_notes")).toBe(before);
});

test("a draft is its author's and the owner's: another vet and staff get 403 and do not see it listed", async () => {
  const { visit, note } = await draft(vet);
  const otherVet = await addMember(t, owner, "vet");
  for (const session of [otherVet, staff]) {
    expect((await session.as("GET", `/api/v1/notes/${note.id}`)).status).toBe(403);
    const list = await session.as<CursorPageBody<NoteView>>("GET", `/api/v1/visits/${visit}/notes`);
    expect(list.body.data).toEqual([]);
  }
  expect((await otherVet.as("PATCH", `/api/v1/notes/${note.id}`, { json: { plan: "otro" } })).status).toBe(403);
  expect((await otherVet.as("POST", `/api/v1/notes/${note.id}/sign`)).status).toBe(403);
  const byOwner = await owner.as<NoteView>("PATCH", `/api/v1/notes/${note.id}`, { json: { plan: "Control en 3 días" } });
  expect(byOwner.status, byOwner.text).toBe(200);
  expect(byOwner.body.plan).toBe("Control en 3 días");
  const byAuthor = await vet.as<NoteView>("PATCH", `/api/v1/notes/${note.id}`, { json: { subjective: null } });
  expect(byAuthor.body).toMatchObject({ subjective: null, plan: "Control en 3 días" });
});

test("signing stamps signed_at and signed_by; then PATCH and DELETE are 409 NOTE_SIGNED and change nothing", async () => {
  const { visit, note } = await draft(vet);
  t.clock.advance(60_000);
  const signed = await vet.as<NoteView>("POST", `/api/v1/notes/${note.id}/sign`);
  expect(signed.status, signed.text).toBe(200);
  expect(signed.body).toMatchObject({ status: "signed", signed_by: vet.user.id, signed_at: t.clock.now().toISOString().replace(".000Z", "Z") });
  const before = await owner.as<NoteView>("GET", `/api/v1/notes/${note.id}`);
  for (const [method, json] of [["PATCH", { plan: "reescrito" }], ["DELETE", undefined]] as const) {
    for (const session of [vet, owner]) {
      const r = await session.as<ErrorBody>(method, `/api/v1/notes/${note.id}`, { json });
      expect(r.status, r.text).toBe(409);
      expect(r.body.code).toBe("NOTE_SIGNED");
    }
  }
  expect((await vet.as<ErrorBody>("POST", `/api/v1/notes/${note.id}/sign`)).body.code).toBe("NOTE_SIGNED");
  expect((await owner.as("GET", `/api/v1/notes/${note.id}`)).body).toEqual(before.body);
  // Staff read signed notes.
  const list = await staff.as<CursorPageBody<NoteView>>("GET", `/api/v1/visits/${visit}/notes`);
  expect(list.body.data.map((n) => n.id)).toEqual([note.id]);
});

test("the database itself refuses to rewrite or delete a signed note, and to delete any clinical row", async () => {
  const { note } = await draft(vet);
  await vet.as("POST", `/api/v1/notes/${note.id}/sign`);
  await expect(t.database.query("update clinical_notes set plan = 'rewritten' where id = $1", [note.id])).rejects.toThrow(/signed note is final/);
  await expect(t.database.query("delete from clinical_notes where id = $1", [note.id])).rejects.toThrow(/never deleted/);
  const [row] = await t.database.query<{ plan: string }>("select plan from clinical_notes where id = $1", [note.id]);
  expect(row!.plan).toBe(soap.plan);
});

test("addenda: only on signed notes, author and time recorded, listed with the note, never edited", async () => {
  const { visit, note } = await draft(vet);
  const early = await vet.as<ErrorBody>("POST", `/api/v1/notes/${note.id}/addenda`, { json: { text: "x" } });
  expect(early.status, early.text).toBe(409);
  await vet.as("POST", `/api/v1/notes/${note.id}/sign`);
  t.clock.advance(2 * 60_000);
  const added = await owner.as<AddendumView>("POST", `/api/v1/notes/${note.id}/addenda`, { json: { text: "Resultado de laboratorio: leucocitosis leve" } });
  expect(added.status, added.text).toBe(201);
  expect(added.body).toMatchObject({ note_id: note.id, author_id: owner.user.id, created_at: t.clock.now().toISOString().replace(".000Z", "Z") });
  expect((await staff.as("POST", `/api/v1/notes/${note.id}/addenda`, { json: { text: "x" } })).status).toBe(403);
  const listed = await staff.as<CursorPageBody<NoteView>>("GET", `/api/v1/visits/${visit}/notes`);
  expect(listed.body.data[0]!.addenda).toEqual([added.body]);
  await expect(t.database.query("update note_addenda set text = 'changed' where id = $1", [added.body.id])).rejects.toThrow(/never edited/);
});

test("a draft can be withdrawn (kept in the database, gone from the API); an empty note cannot be signed", async () => {
  const { note } = await draft(vet);
  expect((await vet.as("DELETE", `/api/v1/notes/${note.id}`)).status).toBe(204);
  expect((await vet.as("GET", `/api/v1/notes/${note.id}`)).status).toBe(404);
  expect(await t.database.query("select id from clinical_notes where id = $1 and deleted_at is not null", [note.id])).toHaveLength(1);
  const empty = await draft(vet, { diagnoses: [] });
  const r = await vet.as<ErrorBody>("POST", `/api/v1/notes/${empty.note.id}/sign`);
  expect(r.status, r.text).toBe(422);
});

test("two writers signing the same note at once: one wins, the other gets 409 NOTE_SIGNED", async () => {
  for (let round = 0; round < 5; round++) {
    const { note } = await draft(vet);
    const answers = await Promise.all([vet, owner].map((s) => s.as<Answer<NoteView>>("POST", `/api/v1/notes/${note.id}/sign`)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers.find((a) => a.status === 200)!;
    expect(answers.find((a) => a.status === 409)!.body.code).toBe("NOTE_SIGNED");
    const [row] = await t.database.query<{ signed_by: string }>("select signed_by from clinical_notes where id = $1", [note.id]);
    expect(row!.signed_by).toBe(winner.body.signed_by!);
  }
}, 20_000);

test("a note and a draft edit racing a signature: the edit lands before the signature or is refused, never after it", async () => {
  const { note } = await draft(vet);
  const [edit, sign] = await Promise.all([vet.as("PATCH", `/api/v1/notes/${note.id}`, { json: { plan: "cambio de último minuto" } }), owner.as<NoteView>("POST", `/api/v1/notes/${note.id}/sign`)]);
  expect(sign.status, sign.text).toBe(200);
  const final = await vet.as<NoteView>("GET", `/api/v1/notes/${note.id}`);
  expect(final.body.plan).toBe(edit.status === 200 ? "cambio de último minuto" : soap.plan);
  expect(final.body.updated_at).toBe(final.body.signed_at!);
});

test("another clinic sees none of it (404) and cannot write on this clinic's visit", async () => {
  const { visit, note } = await draft(vet);
  expect((await other.as("GET", `/api/v1/notes/${note.id}`)).status).toBe(404);
  expect((await other.as("GET", `/api/v1/visits/${visit}/notes`)).status).toBe(404);
  expect((await other.as("POST", `/api/v1/visits/${visit}/notes`, { json: soap })).status).toBe(404);
});

test("a visit completes with a draft note; the board flags completed visits with no signed note", async () => {
  const { visit, note } = await draft(vet);
  for (const status of ["in_progress", "completed"]) expect((await owner.as("PATCH", `/api/v1/visits/${visit}`, { json: { status } })).status).toBe(200);
  const flag = async () => (await staff.as<CursorPageBody<BoardVisitView>>("GET", `/api/v1/operations/visits?limit=200`)).body.data.find((v) => v.id === visit)!.needs_signed_note;
  expect(await flag()).toBe(true);
  await vet.as("POST", `/api/v1/notes/${note.id}/sign`);
  expect(await flag()).toBe(false);
  const scheduled = await seedVisit(t, owner);
  expect((await staff.as<CursorPageBody<BoardVisitView>>("GET", `/api/v1/operations/visits?limit=200`)).body.data.find((v) => v.id === scheduled)!.needs_signed_note).toBe(false);
});

test("a cancelled visit takes no note (409)", async () => {
  const visit = await seedVisit(t, owner);
  await owner.as("PATCH", `/api/v1/visits/${visit}`, { json: { status: "cancelled" } });
  expect((await vet.as("POST", `/api/v1/visits/${visit}/notes`, { json: soap })).status).toBe(409);
});
