import { alerts, clinics, invoiceItems, invoices, patients, payments, refunds, taxDocuments, tutors, users, visits } from "../../src/db/schema";
import { afterAll, beforeAll } from "bun:test";
import type { Database } from "../../src/db/client";
import { createTestDatabase, type TestDatabase } from "../helpers/database";

export const CLINIC_A = "01900000-0000-7000-8000-00000000000a";
export const CLINIC_B = "01900000-0000-7000-8000-00000000000b";

const uuid = (clinic: "a" | "b", n: number) => `0190000${clinic === "a" ? "1" : "2"}-0000-7000-8000-${String(n).padStart(12, "0")}`;

/**
 * Two clinics with overlapping data (same names, amounts and dates), so that any row of the
 * other clinic that leaks into a result changes it. Clinic A's figures are the expected ones.
 */
export async function seedTwoClinics(database: Database): Promise<void> {
  const db = database.db;
  const at = (iso: string) => new Date(iso);
  for (const [clinic, tag, extra] of [[CLINIC_A, "a", 0], [CLINIC_B, "b", 1]] as const) {
    const u = (n: number) => uuid(tag, n);
    const base = { clinic_id: clinic, created_at: at("2026-01-01T10:00:00Z"), updated_at: at("2026-01-01T10:00:00Z") };
    await db.insert(clinics).values({ id: clinic, name: `Clinic ${tag}`, created_at: base.created_at, updated_at: base.updated_at });
    await db.insert(users).values({ ...base, id: u(900), email: `owner-${tag}@sql.test`, name: "Owner", role: "owner", password_hash: "$argon2id$secret-hash" });
    await db.insert(tutors).values([
      { ...base, id: u(1), name: "Ana Pérez", phone: "+56911111111", national_id: "12.345.678-5", created_at: at("2026-01-02T10:00:00Z") },
      { ...base, id: u(2), name: "Luis Soto", email: "luis@correo.cl", created_at: at("2026-01-03T10:00:00Z") },
      { ...base, id: u(3), name: "Marta Díaz", deleted_at: at("2026-01-04T10:00:00Z") },
      ...(extra ? [{ ...base, id: u(4), name: "Only In B" }] : []),
    ]);
    await db.insert(patients).values([
      { ...base, id: u(11), tutor_id: u(1), name: "Rex", species: "dog", breed: "Quiltro", weight_grams: 12_000, birth_date: "2020-05-01" },
      { ...base, id: u(12), tutor_id: u(1), name: "Michi", species: "cat", weight_grams: 4_000, birth_date: "2022-01-15" },
      { ...base, id: u(13), tutor_id: u(2), name: "Nube", species: "cat", weight_grams: 3_500 },
    ]);
    await db.insert(visits).values([
      { ...base, id: u(21), patient_id: u(11), status: "completed", scheduled_at: at("2026-01-10T13:00:00Z"), started_at: at("2026-01-10T13:05:00Z"), completed_at: at("2026-01-10T13:35:00Z"), reason: "Vacuna", diagnosis: "Sano" },
      { ...base, id: u(22), patient_id: u(12), status: "scheduled", scheduled_at: at("2026-01-20T15:00:00Z"), reason: "Control" },
      { ...base, id: u(23), patient_id: u(13), status: "cancelled", scheduled_at: at("2026-01-11T09:00:00Z"), reason: "Otitis" },
      { ...base, id: u(24), patient_id: u(11), status: "completed", scheduled_at: at("2026-01-12T09:00:00Z"), deleted_at: at("2026-01-13T00:00:00Z") },
    ]);
    const inv = (n: number, tutor: number, status: "draft" | "emitted" | "paid", net: number, paid: number, emitted: string | null) => ({
      ...base, id: u(n), tutor_id: u(tutor), status, currency: "CLP", net_amount: net, tax_amount: Math.floor((net * 1900 + 5000) / 10000),
      total_amount: net + Math.floor((net * 1900 + 5000) / 10000), paid_amount: paid, emitted_at: emitted ? at(emitted) : null,
    });
    await db.insert(invoices).values([
      inv(31, 1, "paid", 10_000, 11_900, "2026-01-10T14:00:00Z"),
      inv(32, 2, "emitted", 5_000, 1_500, "2026-01-11T14:00:00Z"),
      inv(33, 1, "draft", 1_000, 0, null),
    ]);
    await db.insert(invoiceItems).values([
      { ...base, id: u(41), invoice_id: u(31), position: 0, description: "Consulta", quantity: 2, unit_price: 5_000, total_amount: 10_000 },
      { ...base, id: u(42), invoice_id: u(32), position: 0, description: "Vacuna", quantity: 1, unit_price: 5_000, total_amount: 5_000 },
      { ...base, id: u(43), invoice_id: u(33), position: 0, description: "Desparasitación", quantity: 1, unit_price: 1_000, total_amount: 1_000 },
    ]);
    await db.insert(payments).values([
      { ...base, id: u(51), invoice_id: u(31), amount: 11_900, currency: "CLP", method: "card", paid_at: at("2026-01-10T14:05:00Z") },
      { ...base, id: u(52), invoice_id: u(32), amount: 2_000, currency: "CLP", method: "cash", paid_at: at("2026-01-11T14:05:00Z"), refunded_amount: 500 },
    ]);
    await db.insert(refunds).values({ ...base, id: u(61), payment_id: u(52), invoice_id: u(32), amount: 500, currency: "CLP", reason: "Error", refunded_at: at("2026-01-12T10:00:00Z") });
    await db.insert(taxDocuments).values({ ...base, id: u(71), invoice_id: u(31), doc_type: 39, folio: 1, currency: "CLP", net_amount: 10_000, tax_amount: 1_900, total_amount: 11_900, issued_at: at("2026-01-10T14:06:00Z") });
    await db.insert(alerts).values([
      { ...base, id: u(81), patient_id: u(11), kind: "vaccine_due", message: "Rabia", status: "active", due_date: "2026-02-01" },
      { ...base, id: u(82), patient_id: u(12), kind: "allergy", message: "Penicilina", status: "resolved" },
    ]);
  }
}

export const ROW_COUNTS_SQL = `select (select count(*) from tutors) + (select count(*) from patients) + (select count(*) from visits) + (select count(*) from invoices) + (select count(*) from payments) + (select count(*) from users) + (select count(*) from api_keys) as n`;

/**
 * The opening of a test file that runs queries as the clinics: a fresh database holding the two
 * clinics, dropped after the file; `assign` hands it to the file once it exists.
 */
export function useTwoClinics(assign: (database: TestDatabase) => void): void {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    await seedTwoClinics(database);
    assign(database);
  });
  afterAll(() => database?.destroy());
}
