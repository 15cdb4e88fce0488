import { expect, test } from "bun:test";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey, invoke } from "../mcp/helpers";

let t: TestApp;
let owner: ClinicSession;
let vet: ClinicSession;
useClinicApp((made) => ({ t, owner, vet } = made), { members: ["vet"], clinic: { timezone: "America/Santiago" } });

test("find_available_slots (scope read) answers what GET /availability answers, and books nothing", async () => {
  const type = await owner.as<{ id: string }>("POST", "/api/v1/appointment-types", { json: { name: "Consulta", duration_minutes: 45, vet_ids: [vet.user.id] } });
  const query = { appointment_type_id: type.body.id, from: "2026-01-19", to: "2026-01-25" };
  const rest = await owner.as<{ data: unknown[] }>("GET", `/api/v1/availability?appointment_type_id=${query.appointment_type_id}&from=${query.from}&to=${query.to}`);
  expect(rest.body.data.length).toBeGreaterThan(0);
  const visits = await t.count("visits");
  const key = await createKey(owner, { scopes: ["read"] });
  const r = await invoke<{ data: unknown[]; timezone: string }>(t, key.api_key, "find_available_slots", query);
  expect(r.status, r.text).toBe(200);
  expect(r.body).toMatchObject(rest.body);
  expect(await t.count("visits")).toBe(visits);
  const tooLong = await invoke(t, key.api_key, "find_available_slots", { ...query, to: "2026-03-01" });
  expect(tooLong.status, tooLong.text).toBe(422);
  const noScope = await createKey(owner, { scopes: ["query"] });
  expect((await invoke(t, noScope.api_key, "find_available_slots", query)).status).toBe(403);
});
