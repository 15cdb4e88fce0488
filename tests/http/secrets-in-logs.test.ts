/** A failing statement's bound values (password hashes, key digests) never reach the log. */
import { beforeAll, expect, test } from "bun:test";
import type { TestApp } from "../helpers/app";
import { PASSWORD, uniqueEmail, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;

useClinicApp((made) => ({ t, owner } = made));
beforeAll(async () => {
  // Every new user and key is now refused by the database after its values were bound.
  await t.database.query("alter table users add constraint refuse_new_users check (created_at < '2000-01-01') not valid");
  await t.database.query("alter table api_keys add constraint refuse_new_keys check (created_at < '2000-01-01') not valid");
});

test("the 500s of failing inserts are logged by class, SQLSTATE and frames only", async () => {
  t.logLines.length = 0;
  const user = await owner.as("POST", "/api/v1/users", { json: { email: uniqueEmail(), name: "Vet", role: "vet", password: PASSWORD } });
  expect(user.status, user.text).toBe(500);
  const key = await owner.as("POST", "/api/v1/mcp/keys", { json: { name: "k", scopes: ["read"] } });
  expect(key.status, key.text).toBe(500);
  const log = t.logLines.join("\n");
  const errors = t.logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === "unhandled error");
  expect(errors, log).toHaveLength(2);
  for (const line of errors) expect(line.sqlstate, log).toBe("23514");
  expect(log).not.toContain("$argon2");
  expect(log).not.toMatch(/[0-9a-f]{64}/);
  expect(log).not.toContain("insert into");
  expect(log).not.toContain(PASSWORD);
});
