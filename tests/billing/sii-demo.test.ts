import { afterAll, beforeAll, expect, test } from "bun:test";
import { seedDemo, type DemoResult } from "../../src/cli/seed";
import type { SessionView } from "../../src/modules/auth/model";
import { createTestApp, testConfig, type TestApp } from "../helpers/app";

let t: TestApp;
let demo: DemoResult;
beforeAll(async () => {
  t = await createTestApp();
  demo = await seedDemo(t.database, t.clock, "small", { secretsKey: testConfig().secretsKey });
  // Seeding the demo takes seconds on a busy PostgreSQL: more than a hook's default 5 s.
}, 60_000);
afterAll(() => t.close());

test("the demo clinic has a test CAF per type, a test certificate and a signed boleta it can print; the console's owner can issue more", async () => {
  const login = await t.request<SessionView>("POST", "/api/v1/auth/login", { json: demo.owner });
  const token = login.body.access_token;
  const cafs = await t.request<{ data: { doc_type: number; environment: string; next_folio: number; range_from: number }[] }>("GET", "/api/v1/billing/sii/cafs", { token });
  expect(cafs.body.data.map((caf) => [caf.doc_type, caf.environment])).toEqual([[33, "test"], [39, "test"], [61, "test"]]);
  expect((await t.request<{ holder_rut: string }>("GET", "/api/v1/billing/sii/certificate", { token })).body.holder_rut).toBe("12.345.678-5");
  const signed = await t.database.query<{ id: string; folio: number }>("select id, folio from tax_documents where clinic_id = $1 and signed_xml is not null", [demo.clinic_id]);
  expect(signed).toHaveLength(1);
  const boleta = cafs.body.data.find((caf) => caf.doc_type === 39)!;
  expect(signed[0]!.folio).toBe(boleta.range_from);
  const pdf = await t.app.handle(new Request(`http://localhost/api/v1/billing/sii/documents/${signed[0]!.id}/pdf`, { headers: { authorization: `Bearer ${token}` } }));
  expect(pdf.status).toBe(200);
  expect(pdf.headers.get("content-type")).toBe("application/pdf");
});
