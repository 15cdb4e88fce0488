/** DNS rebinding: POST /mcp answers only its own names (PUBLIC_URL's host, loopback). */
import { expect, test } from "bun:test";
import type { ErrorBody, TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey } from "./helpers";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { config: { publicUrl: "https://clinic.example.com" } });

const list = (key: string, host: string) =>
  t.request<ErrorBody>("POST", "/mcp", { token: key, json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { host, accept: "application/json, text/event-stream" } });

test("a foreign Host is refused with 403; PUBLIC_URL's host and loopback names are served", async () => {
  const key = (await createKey(owner)).api_key;
  const foreign = await list(key, "attacker.example");
  expect(foreign.status).toBe(403);
  expect(foreign.body.message).toContain("attacker.example");
  for (const host of ["clinic.example.com", "localhost:3000", "127.0.0.1:3000", "[::1]:3000"]) expect((await list(key, host)).status, host).toBe(200);
});
