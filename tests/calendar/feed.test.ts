import { expect, test } from "bun:test";
import ICAL from "ical.js";
import { sha256Hex } from "../../src/lib/crypto";
import type { CreatedFeedView, FeedStatusView } from "../../src/modules/calendar-feed/model";
import type { VisitView } from "../../src/modules/visits/model";
import type { ErrorBody, TestApp } from "../helpers/app";
import { flushDeferred, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { seedTutor } from "../helpers/protected-routes";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
useClinicApp((made) => ({ t, owner, vet } = made), { members: ["vet"] });

const created = async (path: string, json: Record<string, unknown>) => {
  const r = await owner.as<{ id: string }>("POST", `/api/v1${path}`, { json });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
const book = async (json: Record<string, unknown>) => {
  const r = await owner.as<VisitView>("POST", "/api/v1/visits", { json });
  expect(r.status, r.text).toBe(201);
  return r.body;
};
const change = async (id: string, json: Record<string, unknown>) => {
  const r = await owner.as<VisitView>("PATCH", `/api/v1/visits/${id}`, { json });
  expect(r.status, r.text).toBe(200);
  return r.body;
};
const newFeed = async (as: ClinicSession, userId: string) => {
  const r = await as.as<CreatedFeedView>("POST", `/api/v1/users/${userId}/calendar-feed`);
  expect(r.status, r.text).toBe(201);
  expect(r.body.webcal_url).toBe(r.body.url.replace(/^https?:/, "webcal:"));
  return new URL(r.body.url).pathname;
};
const read = (path: string) => t.request<string>("GET", path);

interface ReadEvent {
  uid: string;
  sequence: number;
  start: string;
  end: string;
  summary: string;
  status: string;
  location: string | null;
}
/** The feed as a calendar client reads it (ical.js). */
function parse(text: string): ReadEvent[] {
  const calendar = new ICAL.Component(ICAL.parse(text));
  expect(calendar.getFirstPropertyValue("version")).toBe("2.0");
  return calendar.getAllSubcomponents("vevent").map((vevent) => {
    const event = new ICAL.Event(vevent);
    expect(vevent.getFirstPropertyValue("dtstamp")).toBeTruthy();
    expect(event.startDate.zone?.tzid).toBe("UTC");
    return {
      uid: event.uid,
      sequence: event.sequence,
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      summary: event.summary,
      status: String(vevent.getFirstPropertyValue("status")),
      location: (event.location as string | null) ?? null,
    };
  });
}

test("a vet's feed: every visit of theirs in the window once, with a stable UID, its length, its revision and its status; text escaped, lines folded", async () => {
  // The clock stands at 2026-01-15T12:00:00Z: the window runs from 2025-12-16 to 2026-07-14.
  const type = await created("/appointment-types", { name: "Vacunación; refuerzo, anual", duration_minutes: 45 });
  const room = await created("/rooms", { name: "Box 1" });
  const tutor = await seedTutor(t, owner);
  const name = "Michi \\ \"el gato\", de la señora Ñuñoa; con un nombre largo que obliga a plegar la línea";
  const patient = await created("/patients", { tutor_id: tutor, name, species: "cat" });
  const typed = await book({ patient_id: patient, vet_id: vet.user.id, scheduled_at: "2026-01-20T13:00:00Z", appointment_type_id: type, room_id: room, reason: "Vómitos (privado)" });
  const cancelled = await book({ patient_id: patient, vet_id: vet.user.id, scheduled_at: "2026-01-21T13:00:00Z" });
  const past = await book({ patient_id: patient, vet_id: vet.user.id, scheduled_at: "2025-12-20T13:00:00Z" });
  await book({ patient_id: patient, vet_id: vet.user.id, scheduled_at: "2025-12-01T13:00:00Z" }); // before the window
  await book({ patient_id: patient, vet_id: vet.user.id, scheduled_at: "2026-08-01T13:00:00Z" }); // after it
  await book({ patient_id: patient, vet_id: owner.user.id, scheduled_at: "2026-01-20T13:00:00Z" }); // another vet's

  const path = await newFeed(vet, vet.user.id);
  const first = await read(path);
  expect(first.status, first.text).toBe(200);
  expect(first.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
  expect(first.headers.get("cache-control")).toBe("no-store");
  // CRLF after every line, none longer than 75 octets, continuations start with a space.
  expect(first.text.endsWith("END:VCALENDAR\r\n")).toBe(true);
  const lines = first.text.split("\r\n").slice(0, -1);
  expect(lines.every((line) => !line.includes("\n") && new TextEncoder().encode(line).length <= 75)).toBe(true);
  expect(lines.some((line) => line.startsWith(" "))).toBe(true);
  const unfolded = first.text.replaceAll("\r\n ", "");
  expect(unfolded).toContain(`SUMMARY:Michi \\\\ "el gato"\\, de la señora Ñuñoa\\; con un nombre largo que obliga a plegar la línea · Vacunación\\; refuerzo\\, anual\r\n`);
  expect(unfolded).not.toContain("Vómitos");
  expect(unfolded).toContain(`DTSTART:20260120T130000Z\r\nDTEND:20260120T134500Z\r\n`);

  const events = parse(first.text);
  expect(events.map((e) => e.uid)).toEqual([past.id, typed.id, cancelled.id].map((id) => `${id}@vet-clinic-service`));
  expect(events[1]).toEqual({ uid: `${typed.id}@vet-clinic-service`, sequence: 0, start: "2026-01-20T13:00:00.000Z", end: "2026-01-20T13:45:00.000Z", summary: `${name} · Vacunación; refuerzo, anual`, status: "CONFIRMED", location: "Box 1" });
  expect(events[2]!.summary).toBe(name);

  // A move and a cancellation: the same UIDs, SEQUENCE follows the visit's revision, the cancelled visit stays as CANCELLED.
  const moved = await change(typed.id, { scheduled_at: "2026-01-20T15:00:00Z" });
  const gone = await change(cancelled.id, { status: "cancelled" });
  expect(moved.revision).toBeGreaterThan(typed.revision);
  const again = parse((await read(path)).text);
  expect(again.map((e) => e.uid)).toEqual(events.map((e) => e.uid));
  expect(again[1]).toMatchObject({ sequence: moved.revision, start: "2026-01-20T15:00:00.000Z", end: "2026-01-20T15:45:00.000Z", status: "CONFIRMED" });
  expect(again[2]).toMatchObject({ sequence: gone.revision, status: "CANCELLED" });
  expect(gone.revision).toBeGreaterThan(cancelled.revision);
});

test("a new address replaces the old one at once, turning it off answers 404, and the token never reaches the log", async () => {
  const before = await vet.as<FeedStatusView>("GET", `/api/v1/users/${vet.user.id}/calendar-feed`);
  expect(before.body.active).toBe(true);
  const old = await newFeed(vet, vet.user.id);
  expect((await read(old)).status).toBe(200);
  // The owner may make one for anyone; the vet's previous address stops working.
  const current = await newFeed(owner, vet.user.id);
  const refused = await read(old);
  expect(refused.status, refused.text).toBe(404);
  expect((refused.body as unknown as ErrorBody).code).toBe("NOT_FOUND");
  expect((await read(current)).status).toBe(200);
  expect(await t.count("calendar_feeds")).toBe(1);

  const off = await vet.as("DELETE", `/api/v1/users/${vet.user.id}/calendar-feed`);
  expect(off.status, off.text).toBe(204);
  expect((await read(current)).status).toBe(404);
  expect((await vet.as<FeedStatusView>("GET", `/api/v1/users/${vet.user.id}/calendar-feed`)).body).toEqual({ active: false, created_at: null });

  // A malformed address is refused before any lookup.
  expect((await read("/api/v1/calendar/short.ics")).status).toBe(422);
  // Only the token's digest is stored; neither the token nor its digest is logged.
  const token = current.split("/").at(-1)!.replace(".ics", "");
  const again = await newFeed(vet, vet.user.id);
  const stored = await t.database.query<{ token_hash: string }>("select token_hash from calendar_feeds");
  expect(stored).toEqual([{ token_hash: sha256Hex(again.split("/").at(-1)!.replace(".ics", "")) }]);
  await flushDeferred(); // request lines are written after each response, on the next turn
  const logs = t.logLines.join("\n");
  expect(logs).toContain("/api/v1/calendar/{token}.ics");
  expect(logs).not.toContain(token);
  expect(logs).not.toContain(sha256Hex(token));
  // Making, replacing and turning off a feed are in the audit trail, by who did it, without the digest.
  const events = await t.database.query<{ action: string; actor_id: string | null; text: string }>("select action, actor_id, e::text as text from events e where entity_type = 'calendar_feed' order by seq");
  expect(events.map((e) => e.action)).toContain("calendar_feed.created");
  expect(events.map((e) => e.action)).toContain("calendar_feed.deleted");
  expect(events.some((e) => e.actor_id === owner.user.id)).toBe(true);
  for (const event of events) {
    expect(event.text).not.toContain(token);
    expect(event.text).not.toContain(sha256Hex(token));
  }
});

test("a person who leaves the clinic has no feed", async () => {
  const path = await newFeed(owner, vet.user.id);
  const removed = await owner.as("DELETE", `/api/v1/users/${vet.user.id}`);
  expect(removed.status, removed.text).toBe(204);
  expect((await read(path)).status).toBe(404);
});
