/** Dates, timestamps and money at and past their bounds: 422 naming the field, or exact. */
import { beforeAll, describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { PatientView } from "../../src/modules/patients/model";
import type { VisitView } from "../../src/modules/visits/model";
import type { Refusal, ValidationDetails } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { tutorFor } from "../billing/helpers";
import { useClinicApp } from "../helpers/fixture";

let owner: ClinicSession;
let patientId: string;

useClinicApp((made) => ({ owner } = made), { clinic: { timezone: "America/Santiago" } });
beforeAll(async () => {
  const tutorId = await tutorFor(owner);
  const patient = await owner.as<PatientView>("POST", "/api/v1/patients", { json: { tutor_id: tutorId, name: "Luna", species: "dog" } });
  patientId = patient.body.id;
});

const paths = (body: { details?: { fields?: { path: string; message: string }[] } }) => body.details?.fields?.map((f) => f.path) ?? [];

describe("dates and timestamps", () => {
  test.each([
    ["2026-02-30", "body.due_date"],
    ["2026-13-01", "body.due_date"],
    ["0000-01-01", "body.due_date"],
    ["9999-12-31", "body.due_date"],
    ["2026-1-5", "body.due_date"],
  ])("alert due_date %s is 422", async (due_date, field) => {
    const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/alerts", { json: { patient_id: patientId, kind: "custom", message: "x", due_date } });
    expect(r.status, r.text).toBe(422);
    expect(paths(r.body), r.text).toContain(field);
  });

  test.each([
    ["2026-02-30T10:00:00Z", "calendar day"],
    ["2026-11-24T24:00:00Z", "Hours"],
    ["2026-06-30T23:59:60Z", "leap"],
    ["2026-11-24 10:00", "RFC 3339"],
    ["2026-11-24T10:00:00", "needs Z or an offset"],
    ["0000-11-24T10:00:00Z", "Year"],
  ])("scheduled_at %s is 422 saying why", async (scheduled_at, why) => {
    const before = (await owner.as<CursorPageBody<VisitView>>("GET", "/api/v1/visits")).body.data.length;
    const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at } });
    expect(r.status, r.text).toBe(422);
    const field = r.body.details.fields.find((f: { path: string }) => f.path === "body.scheduled_at");
    expect(field?.message, r.text).toContain(why);
    expect((await owner.as<CursorPageBody<VisitView>>("GET", "/api/v1/visits")).body.data.length).toBe(before);
  });

  test("a timestamp with an offset is stored as that instant", async () => {
    const r = await owner.as<VisitView>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-11-24T10:00:00-03:00" } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.scheduled_at).toBe("2026-11-24T13:00:00Z");
  });

  test("every date-filtered list answers 422 (never 500) for dates out of range, and 200 at the range's ends", async () => {
    const lists = ["/visits", "/alerts", "/operations/visits", "/billing/invoices", "/billing/payments", "/billing/refunds", "/billing/sii/documents", "/mcp/usage"];
    for (const list of lists) {
      for (const bad of ["date_to=9999-12-31", "date_from=0000-01-01", "date_from=2026-02-30", "date_to=today"]) {
        const r = await owner.as("GET", `/api/v1${list}?${bad}`);
        expect(r.status, `${list}?${bad}: ${r.text}`).toBe(422);
      }
      const ok = await owner.as("GET", `/api/v1${list}?date_from=1900-01-01&date_to=2999-12-31`);
      expect(ok.status, `${list}: ${ok.text}`).toBe(200);
    }
    for (const date of ["9999-12-31", "0000-01-01", "2026-02-30"]) {
      const r = await owner.as<Refusal<ValidationDetails>>("GET", `/api/v1/mcp/usage/summary?date=${date}`);
      expect(r.status, r.text).toBe(422);
      expect(paths(r.body)).toContain("query.date");
    }
  });

  test("birth_date in year 0000 is 422", async () => {
    const tutorId = await tutorFor(owner);
    const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/patients", { json: { tutor_id: tutorId, name: "Old", species: "cat", birth_date: "0000-01-01" } });
    expect(r.status, r.text).toBe(422);
    expect(paths(r.body)).toContain("body.birth_date");
  });
});

describe("money stays exact", () => {
  test("the largest accepted invoice has exact totals", async () => {
    const tutor_id = await tutorFor(owner);
    const r = await owner.as<InvoiceView>("POST", "/api/v1/billing/invoices", {
      json: { tutor_id, items: [{ description: "Max", quantity: 100_000, unit_price: 10_000_000_000 }] },
    });
    expect(r.status, r.text).toBe(201);
    const net = 10n ** 15n;
    const tax = (net * 1900n + 5000n) / 10000n;
    expect([r.body.net_amount, r.body.tax_amount, r.body.total_amount]).toEqual([Number(net), Number(tax), Number(net + tax)]);
    expect(Number.isSafeInteger(r.body.total_amount)).toBe(true);
    expect(r.body.items![0]!.total_amount).toBe(Number(net));
  });

  test("one unit past the bound is 422 naming the items, and nothing is written", async () => {
    const tutor_id = await tutorFor(owner);
    const before = (await owner.as<CursorPageBody<InvoiceView>>("GET", "/api/v1/billing/invoices?limit=200")).body.data.length;
    const cases = [
      [{ description: "Max", quantity: 100_000, unit_price: 10_000_000_000 }, { description: "One more", quantity: 1, unit_price: 1 }],
      Array.from({ length: 200 }, () => ({ description: "Big", quantity: 99_999, unit_price: 9_999_999_999 })),
    ];
    for (const items of cases) {
      const r = await owner.as<Refusal<ValidationDetails>>("POST", "/api/v1/billing/invoices", { json: { tutor_id, items } });
      expect(r.status, r.text).toBe(422);
      expect(paths(r.body)).toContain("body.items");
    }
    expect((await owner.as<CursorPageBody<InvoiceView>>("GET", "/api/v1/billing/invoices?limit=200")).body.data.length).toBe(before);
  });
});
