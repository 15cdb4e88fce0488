import { expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { rfc3339 } from "../../src/lib/time";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

type Row = { id: string; name: string; deleted_at?: string | null };
const tutor = async (name: string) => (await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name } })).body.id;

test("updated_since: what changed after it, deleted records included with deleted_at, oldest change first, paged", async () => {
  const untouched = await tutor("Untouched");
  const edited = await tutor("Edited");
  const deleted = await tutor("Deleted");
  t.clock.advance(1000);
  const since = rfc3339(t.clock.now());
  t.clock.advance(1000);
  await owner.as("PATCH", `/api/v1/tutors/${edited}`, { json: { name: "Edited again" } });
  t.clock.advance(1000);
  expect((await owner.as("DELETE", `/api/v1/tutors/${deleted}`)).status).toBe(204);
  t.clock.advance(1000);
  const fresh = await tutor("Fresh");
  const first = await owner.as<CursorPageBody<Row>>("GET", `/api/v1/tutors?updated_since=${encodeURIComponent(since)}&limit=2`);
  expect(first.status, first.text).toBe(200);
  expect(first.body.data.map((r) => [r.id, r.deleted_at])).toEqual([
    [edited, null],
    [deleted, expect.any(String)],
  ]);
  const next = await owner.as<CursorPageBody<Row>>("GET", `/api/v1/tutors?updated_since=${encodeURIComponent(since)}&limit=2&cursor=${first.body.next_cursor}`);
  expect(next.body.data.map((r) => r.id)).toEqual([fresh]);
  expect(next.body.data.map((r) => r.id)).not.toContain(untouched);
  // The usual list still hides the deleted one and says nothing of deleted_at.
  const live = await owner.as<CursorPageBody<Row>>("GET", "/api/v1/tutors?limit=200");
  expect(live.body.data.map((r) => r.id)).not.toContain(deleted);
  expect(live.body.data[0]).not.toHaveProperty("deleted_at");
  expect((await owner.as("GET", `/api/v1/tutors?updated_since=${encodeURIComponent(since)}&q=Ed`)).status).toBe(422);
  expect((await owner.as("GET", "/api/v1/tutors?updated_since=yesterday")).status).toBe(422);
  expect((await owner.as("GET", `/api/v1/visits?updated_since=${encodeURIComponent(since)}`)).status).toBe(200);
});
