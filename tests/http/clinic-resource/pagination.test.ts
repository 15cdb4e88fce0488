import { beforeAll, expect, test } from "bun:test";
import { tutors } from "../../../src/db/schema";
import { newId } from "../../../src/lib/crypto";
import type { CursorPageBody } from "../../../src/http/pagination";
import type { TutorView } from "../../../src/modules/tutors/model";
import type { ErrorBody, OffsetPageBody, TestApp } from "../../helpers/app";
import type { ClinicSession } from "../../helpers/clinic";
import { useClinicApp } from "../../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
useClinicApp((made) => ({ t, owner, other } = made), { otherClinic: true });
beforeAll(async () => {
  // 250 tutors, several sharing a created_at (the id breaks the tie), plus another clinic's.
  const base = t.clock.now().getTime();
  const rows = Array.from({ length: 250 }, (_, i) => ({
    id: newId(), clinic_id: owner.clinic.id, name: `Tutor ${String(i).padStart(3, "0")}`,
    created_at: new Date(base - 1_000_000 + Math.floor(i / 3) * 1000), updated_at: new Date(base),
  }));
  await t.database.db.insert(tutors).values(rows);
  await t.database.db.insert(tutors).values({ id: newId(), clinic_id: other.clinic.id, name: "Other", created_at: new Date(base - 500_000), updated_at: new Date(base) });
});

const list = async <Page = CursorPageBody<TutorView>>(query: string) => {
  const r = await owner.as<Page>("GET", `/api/v1/tutors?${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
};

test("the cursor form walks 250 records with no duplicates or gaps, including records created between pages", async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  const addedDuringWalk: string[] = [];
  do {
    const page: { data: { id: string; name: string }[]; next_cursor: string | null; has_more: boolean } = await list(`limit=37${cursor ? `&cursor=${cursor}` : ""}`);
    seen.push(...page.data.map((row) => row.id));
    expect(page.has_more).toBe(page.next_cursor !== null);
    cursor = page.next_cursor;
    if (pages++ === 2) {
      t.clock.advance(1000);
      const created = await owner.as<TutorView>("POST", "/api/v1/tutors", { json: { name: "Created mid-walk" } });
      addedDuringWalk.push(created.body.id);
    }
  } while (cursor);
  expect(new Set(seen).size).toBe(seen.length);
  expect(seen.length).toBe(251);
  expect(seen).toContain(addedDuringWalk[0]!);
  expect(seen).not.toContain(other.clinic.id);
});

test("the offset form walks the same list with totals", async () => {
  const all: string[] = [];
  let total = -1;
  for (let offset = 0; ; offset += 50) {
    const page = await list<OffsetPageBody<TutorView>>(`limit=50&offset=${offset}`);
    expect(page).toMatchObject({ limit: 50, offset });
    total = page.total_count;
    all.push(...page.data.map((row: { id: string }) => row.id));
    if (page.data.length < 50) break;
  }
  expect(total).toBe(251);
  expect(new Set(all).size).toBe(251);
  const cursorWalk = await list("limit=200");
  expect(all.slice(0, 200)).toEqual(cursorWalk.data.map((row: { id: string }) => row.id));
});

test("an edited cursor, one from another list, or one with an offset is 400", async () => {
  const page = await list("limit=5");
  const [payload, signature] = (page.next_cursor as string).split(".") as [string, string];
  const decoded = JSON.parse(Buffer.from(payload, "base64url").toString());
  const edited = Buffer.from(JSON.stringify({ ...decoded, v: [decoded.v[0] + 1, decoded.v[1]] })).toString("base64url");
  for (const cursor of [`${edited}.${signature}`, `${payload}.${signature}x`, "%%%", payload]) {
    const r = await owner.as<ErrorBody>("GET", `/api/v1/tutors?cursor=${encodeURIComponent(cursor)}`);
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe("INVALID_CURSOR");
  }
  const foreign = await owner.as<ErrorBody>("GET", `/api/v1/patients?cursor=${page.next_cursor}`);
  expect(foreign.status, foreign.text).toBe(400);
  expect(foreign.body.code).toBe("INVALID_CURSOR");
  const board = await owner.as<ErrorBody>("GET", `/api/v1/operations/visits?cursor=${page.next_cursor}`);
  expect(board.body.code).toBe("INVALID_CURSOR");
  const both = await owner.as<ErrorBody>("GET", `/api/v1/tutors?offset=10&cursor=${page.next_cursor}`);
  expect(both.status, both.text).toBe(400);
  expect(both.body.code).toBe("INVALID_PAGINATION");
});

test("limit is 1–200 (default 50); offset must be a non-negative integer", async () => {
  expect((await list("")).data.length).toBe(50);
  for (const query of ["limit=0", "limit=201", "limit=abc", "offset=-1", "offset=1.5"]) {
    const r = await owner.as("GET", `/api/v1/tutors?${query}`);
    expect(r.status, `${query}: ${r.text}`).toBe(422);
  }
});
