import { expect, test } from "bun:test";
import type { VisitView } from "../../src/modules/visits/model";
import type { Answer, Refusal, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { seedVisit } from "../helpers/protected-routes";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

const move = <Body = Answer<VisitView>>(id: string, status: string) => owner.as<Body>("PATCH", `/api/v1/visits/${id}`, { json: { status } });
const stamp = () => t.clock.now().toISOString().replace(".000Z", "Z");

test("scheduled → in_progress → completed stamps started_at and completed_at", async () => {
  const id = await seedVisit(t, owner);
  t.clock.advance(30_000);
  const started = await move(id, "in_progress");
  expect(started.status, started.text).toBe(200);
  expect(started.body).toMatchObject({ status: "in_progress", started_at: stamp(), completed_at: null });
  t.clock.advance(5 * 60_000);
  const done = await move(id, "completed");
  expect(done.body, done.text).toMatchObject({ status: "completed", started_at: started.body.started_at, completed_at: stamp() });
});

test("scheduled → cancelled and scheduled → no_show", async () => {
  for (const end of ["cancelled", "no_show"]) {
    const id = await seedVisit(t, owner);
    const r = await move(id, end);
    expect(r.body, r.text).toMatchObject({ status: end, started_at: null, completed_at: null });
  }
});

const forbidden: [string[], string][] = [
  [[], "completed"],
  [[], "scheduled"],
  [["in_progress"], "scheduled"],
  [["in_progress"], "cancelled"],
  [["in_progress"], "no_show"],
  [["in_progress"], "in_progress"],
  [["in_progress", "completed"], "in_progress"],
  [["in_progress", "completed"], "cancelled"],
  [["cancelled"], "scheduled"],
  [["cancelled"], "in_progress"],
  [["no_show"], "in_progress"],
  [["no_show"], "completed"],
];
test.each(forbidden)("after %p, moving to %s is 409 INVALID_STATE_TRANSITION and changes nothing", async (path, target) => {
  const id = await seedVisit(t, owner);
  for (const step of path) expect((await move(id, step)).status).toBe(200);
  const before = await owner.as<VisitView>("GET", `/api/v1/visits/${id}`);
  const r = await move<Refusal<{ from: string }>>(id, target);
  expect(r.status, r.text).toBe(409);
  expect(r.body.code).toBe("INVALID_STATE_TRANSITION");
  expect(r.body.details.from).toBe(before.body.status);
  expect((await owner.as("GET", `/api/v1/visits/${id}`)).body).toEqual(before.body);
});

test("an unknown status is 422; a closed visit cannot be rescheduled (409)", async () => {
  const id = await seedVisit(t, owner);
  const unknown = await move(id, "teleported");
  expect(unknown.status, unknown.text).toBe(422);
  await move(id, "cancelled");
  const reschedule = await owner.as("PATCH", `/api/v1/visits/${id}`, { json: { scheduled_at: "2026-02-01T10:00:00Z" } });
  expect(reschedule.status, reschedule.text).toBe(409);
  const notes = await owner.as("PATCH", `/api/v1/visits/${id}`, { json: { notes: "Tutor avisó tarde" } });
  expect(notes.status, notes.text).toBe(200);
});

test("requested (booked online) → scheduled or cancelled, nothing else", async () => {
  const requested = async () => {
    const id = await seedVisit(t, owner);
    await t.database.query("update visits set status = 'requested' where id = $1", [id]);
    return id;
  };
  const confirmed = await move(await requested(), "scheduled");
  expect(confirmed.body, confirmed.text).toMatchObject({ status: "scheduled", started_at: null });
  expect((await move(await requested(), "cancelled")).body.status).toBe("cancelled");
  for (const target of ["in_progress", "completed", "no_show", "requested"]) {
    const r = await move<Refusal<{ from: string; allowed: string[] }>>(await requested(), target);
    expect(r.status, r.text).toBe(409);
    expect(r.body.details).toMatchObject({ from: "requested", allowed: ["scheduled", "cancelled"] });
  }
  // A scheduled visit never goes back to requested.
  expect((await move(await seedVisit(t, owner), "requested")).status).toBe(409);
});
