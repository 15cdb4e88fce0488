/** `order=desc` (newest first) on the usage log, invoices and payments, with stable cursors bound to their direction. */
import { expect, test } from "bun:test";
import type { UsageRowView } from "../../src/modules/mcp-keys/model";
import type { ErrorBody, Refusal, TestApp, TestResponse, ValidationDetails } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { draft } from "../billing/helpers";
import { createKey, invoke } from "../mcp/helpers";
import { useClinicApp } from "../helpers/fixture";
import type { CursorPageBody } from "../../src/http/pagination";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

async function walk(path: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: TestResponse<CursorPageBody<{ id: string }>> = await owner.as("GET", `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(page.status, page.text).toBe(200);
    ids.push(...page.body.data.map((row) => row.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  return ids;
}

test("the usage log newest first, paged with stable cursors; the reverse of the default order", async () => {
  const key = await createKey(owner, { scopes: ["clinic_context"] });
  for (let i = 0; i < 5; i++) {
    t.clock.advance(1000);
    await invoke(t, key.api_key, "get_clinic_context");
  }
  const ascending = await walk("/api/v1/mcp/usage?limit=2&order=asc");
  const descending = await walk("/api/v1/mcp/usage?limit=2&order=desc");
  expect(ascending).toHaveLength(5);
  expect(descending).toEqual([...ascending].reverse());
  const first = await owner.as<CursorPageBody<UsageRowView>>("GET", "/api/v1/mcp/usage?limit=2&order=desc");
  const wrongDirection = await owner.as<ErrorBody>("GET", `/api/v1/mcp/usage?limit=2&cursor=${encodeURIComponent(first.body.next_cursor!)}`);
  expect(wrongDirection.status, wrongDirection.text).toBe(400);
  expect(wrongDirection.body.code).toBe("INVALID_CURSOR");
});

test("invoices and payments take order=desc; an unknown order is 422", async () => {
  for (let i = 0; i < 3; i++) {
    t.clock.advance(1000);
    await draft(owner, [{ quantity: 1, unit_price: 100 + i }]);
  }
  const ascending = await walk("/api/v1/billing/invoices?limit=2");
  expect(await walk("/api/v1/billing/invoices?limit=2&order=desc")).toEqual([...ascending].reverse());
  expect((await owner.as("GET", "/api/v1/billing/payments?order=desc")).status).toBe(200);
  const bad = await owner.as<Refusal<ValidationDetails>>("GET", "/api/v1/billing/invoices?order=newest");
  expect(bad.status, bad.text).toBe(422);
  expect(bad.body.details.fields[0]).toMatchObject({ path: "query.order", message: "Must be one of: asc, desc" });
});
