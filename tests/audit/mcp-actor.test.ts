import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { CursorPageBody } from "../../src/http/pagination";
import { newId } from "../../src/lib/crypto";
import { principalActor } from "../../src/modules/audit/actor";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

interface EventBody {
  action: string;
  actor: { type: string; id: string | null; name: string | null };
  entity: { type: string; id: string };
}

/** A change made in a change context whose actor is an MCP principal, as a writing tool would make it. */
const changeAs = (principal: { id: string; kind: "key" | "connection" }, name: string) => {
  const id = newId();
  const now = t.clock.now();
  return t.context.database.changeContexts
    .run({ actor: principalActor(principal, name), now: () => now }, () =>
      t.context.database.db.transaction((tx) => tx.execute(sql`insert into tutors (id, clinic_id, name, created_at, updated_at) values (${id}, ${owner.clinic.id}, 'From MCP', ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)`)),
    )
    .then(() => id);
};

test("a change an API key or an OAuth connection makes is recorded with actor api_key or connection, its id and name", async () => {
  const key = (await owner.as<{ id: string }>("POST", "/api/v1/mcp/keys", { json: { name: "Claude Desktop", scopes: ["read"] } })).body.id;
  const byKey = await changeAs({ id: key, kind: "key" }, "Claude Desktop");
  const connection = newId();
  const byConnection = await changeAs({ id: connection, kind: "connection" }, "ChatGPT");
  for (const [actorId, entityId, type, name] of [[key, byKey, "api_key", "Claude Desktop"], [connection, byConnection, "connection", "ChatGPT"]] as const) {
    const trail = await owner.as<CursorPageBody<EventBody>>("GET", `/api/v1/audit?actor_id=${actorId}`);
    expect(trail.status, trail.text).toBe(200);
    expect(trail.body.data.map((e) => [e.action, e.entity.id, e.actor])).toEqual([["tutor.created", entityId, { type, id: actorId, name }]]);
  }
});
