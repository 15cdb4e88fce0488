import { expect, test } from "bun:test";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey, invoke } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
let other: ClinicSession;
let staff: ClinicSession;
useClinicApp((made) => ({ t, owner, other, staff } = made), { otherClinic: true, members: ["staff"] });

interface Daily {
  from: string;
  to: string;
  days: { date: string; ok: number; blocked: number; denied: number; rate_limited: number; error: number }[];
  tools: { tool: string; calls: number; ok: number; blocked: number; denied: number }[];
}

test("calls per UTC day by outcome and per tool, every day of the range present, other clinics left out", async () => {
  // Sessions stay valid: the clock goes back two days for one call, then returns.
  const now = t.clock.now();
  const day = (back: number) => new Date(now.getTime() - back * 86_400_000).toISOString().slice(0, 10);
  const key = await createKey(owner, { scopes: ["clinic_context", "query"] });
  const theirs = await createKey(other);
  t.clock.set(new Date(now.getTime() - 2 * 86_400_000));
  expect((await invoke(t, key.api_key, "get_clinic_context")).status).toBe(200);
  t.clock.set(now);
  expect((await invoke(t, key.api_key, "query_database", { sql: "select count(*) from tutors" })).status).toBe(200);
  expect((await invoke(t, key.api_key, "query_database", { sql: "delete from tutors" })).status).toBe(400);
  expect((await invoke(t, key.api_key, "describe_schema")).status).toBe(403);
  await invoke(t, theirs.api_key, "get_clinic_context");

  const r = await owner.as<Daily>("GET", "/api/v1/mcp/usage/daily?days=7");
  expect(r.status, r.text).toBe(200);
  expect(r.body.from).toBe(day(6));
  expect(r.body.to).toBe(day(0));
  expect(r.body.days.map((d) => d.date)).toEqual([6, 5, 4, 3, 2, 1, 0].map(day));
  expect(r.body.days[4]).toEqual({ date: day(2), ok: 1, blocked: 0, denied: 0, rate_limited: 0, error: 0 });
  expect(r.body.days[6]).toEqual({ date: day(0), ok: 1, blocked: 1, denied: 1, rate_limited: 0, error: 0 });
  expect(r.body.tools.map((row) => [row.tool, row.calls, row.ok, row.blocked, row.denied])).toEqual([
    ["query_database", 2, 1, 1, 0],
    ["describe_schema", 1, 0, 0, 1],
    ["get_clinic_context", 1, 1, 0, 0],
  ]);

  const lastTwo = await owner.as<Daily>("GET", `/api/v1/mcp/usage/daily?days=2&api_key_id=${theirs.id}`);
  expect(lastTwo.body.days.map((d) => d.ok + d.blocked + d.denied), lastTwo.text).toEqual([0, 0]);
  const defaults = await owner.as<Daily>("GET", "/api/v1/mcp/usage/daily");
  expect(defaults.body.days).toHaveLength(30);
});

test("the range is 1 to 90 days, and the charts are the owner's", async () => {
  for (const days of ["0", "91", "1.5", "x"]) {
    const r = await owner.as("GET", `/api/v1/mcp/usage/daily?days=${days}`);
    expect(r.status, `${days}: ${r.text}`).toBe(422);
  }
  expect((await staff.as("GET", "/api/v1/mcp/usage/daily")).status).toBe(403);
});
