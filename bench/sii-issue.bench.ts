/**
 * Issuing a boleta: POST /api/v1/billing/sii/documents as it is now (folio from a CAF, TED signed
 * with the CAF key, XMLDSig with the certificate's), against the unsigned issue it replaced (the
 * same transaction — invoice lock, folio counter, row — without the DTE), in process, same run.
 * Target: the signed issue under 20 ms p50.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { createApp } from "../src/app";
import { folioCounters, taxDocuments } from "../src/db/schema";
import { newId } from "../src/lib/crypto";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/logger";
import { lockInvoice } from "../src/modules/billing/invoices/ledger";
import { createTestAuthority } from "../src/modules/billing/sii/test-authority";
import { testConfig } from "../tests/helpers/app";
import { createTestDatabase } from "../tests/helpers/database";
import { percentile } from "./lib/load";
import { databaseLabel, printTable, reportTarget } from "./lib/table";

const COUNT = Number(process.env.BENCH_SII_ISSUES ?? 300);
const authority = createTestAuthority();
const keysFile = join(mkdtempSync(join(tmpdir(), "sii-bench-")), "keys.pem");
writeFileSync(keysFile, authority.publicKeyPem);
const database = await createTestDatabase();
const clock = new ManualClock("2026-01-15T12:00:00Z");
const { app, context } = createApp({ database, config: testConfig({ siiTestCafKeysFile: keysFile }), clock, logger: silentLogger });
const call = async (method: string, path: string, token?: string, json?: unknown) => {
  const response = await app.handle(new Request(`http://localhost${path}`, { method, headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: json ? JSON.stringify(json) : undefined }));
  const body = (await response.json()) as any;
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
};
const owner = await call("POST", "/api/v1/auth/register", undefined, { email: "sii@clinic.test", password: "a long password", name: "S", clinic_name: "SII" });
const token = owner.access_token as string;
const clinicId = owner.clinic.id as string;
await call("PATCH", "/api/v1/clinic", token, { rut: "76.086.428-5", legal_name: "Clínica Bench SpA", giro: "Servicios veterinarios", economic_activity_code: "750000", address: "Av. Siempre Viva 742", commune: "Ñuñoa" });
await call("POST", "/api/v1/billing/sii/cafs", token, { xml: authority.caf({ rut: "76.086.428-5", docType: 39, from: 1, to: 100_000, authorizedOn: "2026-01-10" }) });
const password = "bench";
await call("PUT", "/api/v1/billing/sii/certificate", token, { pkcs12: authority.pkcs12({ holderRut: "12.345.678-5", password, notBefore: new Date("2025-01-01"), notAfter: new Date("2027-01-01") }), password });
const tutor = await call("POST", "/api/v1/tutors", token, { name: "T" });
const emittedInvoices = async (n: number) => {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const invoice = await call("POST", "/api/v1/billing/invoices", token, { tutor_id: tutor.id, items: [{ description: "Consulta", quantity: 1, unit_price: 20_000 + i }, { description: "Vacuna", quantity: 2, unit_price: 7_500 }] });
    await call("POST", `/api/v1/billing/invoices/${invoice.id}/emit`, token);
    ids.push(invoice.id);
  }
  return ids;
};

/** Today's unsigned issue before this change, replayed: lock the invoice, bump the folio counter, write the row. */
async function unsignedIssue(invoiceId: string) {
  await context.services.db.transaction(async (tx) => {
    const invoice = await lockInvoice(tx, clinicId, invoiceId);
    const [existing] = await tx.select({ id: taxDocuments.id }).from(taxDocuments).where(and(eq(taxDocuments.clinic_id, clinicId), eq(taxDocuments.invoice_id, invoiceId)));
    if (!invoice || existing) throw new Error("bench: unexpected state");
    const [counter] = await tx
      .insert(folioCounters)
      .values({ clinic_id: clinicId, doc_type: 38, last_folio: 1 })
      .onConflictDoUpdate({ target: [folioCounters.clinic_id, folioCounters.doc_type], set: { last_folio: sql`${folioCounters.last_folio} + 1` } })
      .returning({ folio: folioCounters.last_folio });
    const now = clock.now();
    await tx.insert(taxDocuments).values({ id: newId(), clinic_id: clinicId, invoice_id: invoice.id, doc_type: 39, folio: 1_000_000 + counter!.folio, currency: invoice.currency, net_amount: invoice.net_amount, tax_amount: invoice.tax_amount, total_amount: invoice.total_amount, issued_at: now, created_at: now, updated_at: now });
  });
}

async function timed(label: string, issueOne: (invoiceId: string) => Promise<unknown>) {
  const invoices = await emittedInvoices(COUNT + 10);
  const samples: number[] = [];
  for (const [index, invoiceId] of invoices.entries()) {
    const started = performance.now();
    await issueOne(invoiceId);
    if (index >= 10) samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { label, p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const unsigned = await timed("unsigned issue (before: counter folio, no DTE; the service transaction)", unsignedIssue);
const httpSigned = await timed("signed boleta: POST /api/v1/billing/sii/documents (CAF folio, TED, XMLDSig)", (id) => call("POST", "/api/v1/billing/sii/documents", token, { doc_type: 39, invoice_id: id }));
await context.lifecycle.beforeClose();
await database.destroy();
printTable(`SII boleta issue — ${databaseLabel()}, ${COUNT} issues each`, [
  { request: unsigned.label, p50_ms: unsigned.p50.toFixed(2), p99_ms: unsigned.p99.toFixed(2) },
  { request: httpSigned.label, p50_ms: httpSigned.p50.toFixed(2), p99_ms: httpSigned.p99.toFixed(2) },
]);
reportTarget({ target: "signed boleta issue p50 < 20 ms", measured: `${httpSigned.p50.toFixed(2)} ms (unsigned ${unsigned.p50.toFixed(2)} ms)`, met: httpSigned.p50 < 20 });
