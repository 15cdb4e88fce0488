/**
 * SII documents right in every case: the timbre over any text, the schema for every document, the
 * SII's formulas on the XML itself, no sale undone without its nota de crédito, a factura's
 * mandatory data, environments apart and the printed copy's rules. Every document issued here also
 * passes the shared checks (schema, xmlsec1, canonical TED) after each test.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { inflateSync } from "node:zlib";
import { createSecretBox } from "../../src/lib/secrets";
import { invoiceTotals } from "../../src/lib/money";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import { buildDte, type DteContent } from "../../src/modules/billing/sii/dte";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import { elementOf, textOf } from "../../src/modules/billing/sii/xml";
import type { Answer, Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { draft, emitted, pay, tutorFor } from "./helpers";
import { barcodeOf, documentProblems, file, run, siiSuite, tedProblems, useSiiChecks } from "./sii-checks";
import { cafFor, facturaReceiver, makeIssuer, siiConfig } from "./sii-fixtures";

let t: TestApp;
useClinicApp((made) => ({ t } = made), { config: siiConfig() });
useSiiChecks(() => t);

const issuer = async (extra: Record<string, unknown> = {}) => {
  const clinic = await registerClinic(t, extra);
  await makeIssuer(clinic);
  return clinic;
};
const issue = <Body = Answer<TaxDocumentView>>(who: ClinicSession, json: Record<string, unknown>) => who.as<Body>("POST", "/api/v1/billing/sii/documents", { json });
const issued = async (who: ClinicSession, json: Record<string, unknown>) => {
  const r = await issue(who, json);
  expect(r.status, r.text).toBe(201);
  return r.body;
};
const raw = async (who: ClinicSession, path: string) => {
  const response = await t.app.handle(new Request(`http://localhost/api/v1/billing/sii/documents/${path}`, { headers: { authorization: `Bearer ${who.token}` } }));
  expect(response.status, path).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
};
const xmlOf = async (who: ClinicSession, id: string) => Buffer.from(await raw(who, `${id}/xml`)).toString("latin1");
const pdfOf = async (who: ClinicSession, id: string, format?: string) => file(await raw(who, `${id}/pdf${format ? `?format=${format}` : ""}`), "doc.pdf");
const pdfText = (path: string) => run(["pdftotext", "-layout", path, "-"]).output;
const count = (table: string) => t.count(table);
const escape5 = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
const detailsOf = (xml: string) => [...xml.matchAll(/<Detalle>[\s\S]*?<\/Detalle>/g)].map(([line]) => line);
const invoiceOf = async (who: ClinicSession, id: string) => (await who.as<InvoiceView>("GET", `/api/v1/billing/invoices/${id}`)).body;

/** A decimal as an integer scaled by 10^6, exactly. */
const scaled6 = (text: string) => {
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6) || "0");
};
/** round(PrcItem × QtyItem), half up, in exact integers. */
const roundedProduct = (price: string, quantity: string) => (scaled6(price) * BigInt(quantity) + 500_000n) / 1_000_000n;

/** Every formula the SII checks on a document's amounts, read from its XML: the problems found. */
function formulaProblems(xml: string): string[] {
  const problems: string[] = [];
  const docType = Number(textOf(xml, "TipoDTE"));
  const total = BigInt(textOf(xml, "MntTotal")!);
  const net = BigInt(textOf(xml, "MntNeto") ?? 0);
  const tax = BigInt(textOf(xml, "IVA") ?? 0);
  const lines = detailsOf(xml).map((line) => ({ quantity: textOf(line, "QtyItem"), price: textOf(line, "PrcItem"), amount: BigInt(textOf(line, "MontoItem")!) }));
  const sum = lines.reduce((acc, line) => acc + line.amount, 0n);
  for (const [index, line] of lines.entries()) {
    if (line.quantity === null) continue;
    if (scaled6(line.price!) <= 0n) problems.push(`line ${index + 1}: PrcItem ${line.price} is not positive`);
    if (roundedProduct(line.price!, line.quantity) !== line.amount) problems.push(`line ${index + 1}: MontoItem ${line.amount} ≠ round(${line.price} × ${line.quantity})`);
  }
  if (net + tax !== total) problems.push(`MntNeto ${net} + IVA ${tax} ≠ MntTotal ${total}`);
  if (docType === 39) {
    if (sum !== total) problems.push(`Σ MontoItem ${sum} ≠ MntTotal ${total}`);
  } else if (total > 0n) {
    if (sum !== net) problems.push(`Σ MontoItem ${sum} ≠ MntNeto ${net}`);
    const rate = textOf(xml, "TasaIVA");
    if (!rate || scaled6(rate) <= 0n) problems.push(`TasaIVA ${rate}`);
    else if ((net * scaled6(rate) + 50_000_000n) / 100_000_000n !== tax) problems.push(`IVA ${tax} ≠ round(${net} × ${rate} %)`);
  }
  return problems;
}
/** A PDF's content streams, inflated (the images' streams left out). */
function pageContents(pdf: Buffer): string {
  const text = pdf.toString("latin1");
  const contents: string[] = [];
  for (const match of text.matchAll(/stream\r?\n/g)) {
    const start = match.index! + match[0].length;
    try {
      const inflated = inflateSync(pdf.subarray(start, text.indexOf("endstream", start))).toString("latin1");
      if (!inflated.includes("\u0000")) contents.push(inflated);
    } catch {
      // Not a deflated stream.
    }
  }
  return contents.join("\n");
}
/** The boleta's split of its total by the SII's rule: MntNeto = round(MntTotal / (1 + TasaIVA)). */
const boletaNet = (total: bigint, bps: bigint) => (total * 20_000n + 10_000n + bps) / (2n * (10_000n + bps));

siiSuite("SII rules", () => {
  describe("one canonical text rule", () => {
    test("known answer: quotes, apostrophes, & < > and accents in the receiver and the item reach the TED escaped as the SII verifies it; the stored DD, the barcode and the FRMT agree", async () => {
      const clinic = await issuer();
      const item = `Catéter 1" <grande> & ñandú 'á'`;
      const name = `Veterinaria O'Higgins & <Cía> "Ñuñoa"`;
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000, description: item } as never]);
      const factura = await issued(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver, receiver_name: name });
      const xml = await xmlOf(clinic, factura.id);
      const ted = elementOf(xml, "TED")!;
      const dd = ted.slice(0, ted.indexOf('<CAF version="1.0">'));
      expect(dd).toBe(
        `<TED version="1.0"><DD><RE>76086428-5</RE><TD>33</TD><F>1</F><FE>2026-01-15</FE><RR>76123456-0</RR>` +
          `<RSR>Veterinaria O&apos;Higgins &amp; &lt;Cía&gt; &quot;Ñuñoa&quot;</RSR><MNT>1190</MNT><IT1>Catéter 1&quot; &lt;grande&gt; &amp; ñandú &apos;á&apos;</IT1>`,
      );
      expect(escape5(name)).toBe("Veterinaria O&apos;Higgins &amp; &lt;Cía&gt; &quot;Ñuñoa&quot;");
      // Verified as LibreDTE verifies: the DD read as XML, flattened and escaped again, then the FRMT with the CAF's key.
      expect(tedProblems(xml)).toEqual([]);
      expect(barcodeOf(await pdfOf(clinic, factura.id))).toBe(ted);
      expect(textOf(xml, "RznSocRecep")).toBe("Veterinaria O'Higgins &amp; &lt;Cía&gt; \"Ñuñoa\"");
    }, 60_000);

    test("control characters are refused naming the field (422, nothing written); line breaks in an item's description are stored and signed as LF", async () => {
      const clinic = await issuer();
      const tutor = await tutorFor(clinic);
      const before = await count("invoices");
      for (const description of ["Consulta\tgeneral", "Consulta\u0007", "Vacuna\u0085"]) {
        const r = await clinic.as<Refusal<ValidationDetails>>("POST", "/api/v1/billing/invoices", { json: { tutor_id: tutor, items: [{ description, quantity: 1, unit_price: 1_000 }] } });
        expect(r.status, r.text).toBe(422);
        expect(r.body.details.fields.map((f) => f.path)).toEqual(["body.items.0.description"]);
      }
      expect(await count("invoices")).toBe(before);
      const multiline = await draft(clinic, [{ description: "Cirugía\r\nCon anestesia\rY control", quantity: 1, unit_price: 5_000 }], tutor);
      expect(multiline.items![0]!.description).toBe("Cirugía\nCon anestesia\nY control");
      await clinic.as("POST", `/api/v1/billing/invoices/${multiline.id}/emit`);
      const documents = await count("tax_documents");
      for (const [field, value] of [["receiver_name", "Granja\nFeliz"], ["receiver_giro", "Agro\tpecuaria"], ["receiver_address", "Calle 1\r"], ["receiver_commune", "Ñuñoa\n"]] as const) {
        const r = await issue<Refusal<ValidationDetails>>(clinic, { doc_type: 33, invoice_id: multiline.id, ...facturaReceiver, [field]: value });
        expect(r.status, r.text).toBe(422);
        expect(r.body.details.fields.map((f) => f.path)).toEqual([`body.${field}`]);
      }
      expect(await count("tax_documents")).toBe(documents);
      const factura = await issued(clinic, { doc_type: 33, invoice_id: multiline.id, ...facturaReceiver });
      const xml = await xmlOf(clinic, factura.id);
      expect(textOf(xml, "NmbItem")).toBe("Cirugía");
      expect(xml).toContain("<DscItem>Cirugía\nCon anestesia\nY control</DscItem>");
      expect(xml).not.toContain("\r");
      expect(textOf(elementOf(xml, "TED")!, "IT1")).toBe("Cirugía");
      // Text stored before the rule (a carriage return in the database) is refused at issue, naming it.
      const old = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      await t.database.query(`update invoice_items set description = E'Consulta\\r\\nurgente' where invoice_id = '${old.id}'`);
      const refused = await issue<Refusal<ValidationDetails>>(clinic, { doc_type: 39, invoice_id: old.id });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.details.fields.map((f) => f.path)).toEqual(["invoice.items[0].description"]);
    });
  });

  describe("every document the schema accepts", () => {
    test("a nota de crédito over a boleta names its receiver (RznSocRecep) and validates", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 2_000 }]);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      const credit = await issued(clinic, { doc_type: 61, referenced_document_id: boleta.id });
      const xml = await xmlOf(clinic, credit.id);
      expect(elementOf(xml, "Receptor")).toBe("<Receptor><RUTRecep>66666666-6</RUTRecep><RznSocRecep>Consumidor final</RznSocRecep></Receptor>");
      expect(documentProblems(xml)).toEqual([]);
    });

    test("a factura of more than 60 lines is refused (422 naming invoice.items) without using a folio; a boleta of 61 lines is issued", async () => {
      const clinic = await issuer();
      const lines = Array.from({ length: 61 }, (_, i) => ({ quantity: 1, unit_price: 100 + i }));
      const long = await emitted(clinic, lines);
      const refused = await issue<Refusal<ValidationDetails>>(clinic, { doc_type: 33, invoice_id: long.id, ...facturaReceiver });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.details.fields[0]!.path).toBe("invoice.items");
      expect(refused.body.details.fields[0]!.message).toContain("at most 60");
      const short = await emitted(clinic, lines.slice(0, 60));
      expect((await issued(clinic, { doc_type: 33, invoice_id: short.id, ...facturaReceiver })).folio).toBe(1);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: long.id });
      expect(detailsOf(await xmlOf(clinic, boleta.id))).toHaveLength(61);
      // Its nota de crédito (a DTE: at most 60 lines) cancels it in one line.
      const credit = await issued(clinic, { doc_type: 61, referenced_document_id: boleta.id });
      expect(detailsOf(await xmlOf(clinic, credit.id))).toHaveLength(1);
    });

    test("a zero price is refused when the invoice is made (422); one stored before is refused at issue, naming the line", async () => {
      const clinic = await issuer();
      const r = await clinic.as<Refusal<ValidationDetails>>("POST", "/api/v1/billing/invoices", { json: { tutor_id: await tutorFor(clinic), items: [{ description: "Control gratis", quantity: 1, unit_price: 0 }] } });
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields[0]!.path).toBe("body.items.0.unit_price");
      const old = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }, { quantity: 1, unit_price: 500 }]);
      await t.database.query(`update invoice_items set unit_price = 0, total_amount = 0 where invoice_id = '${old.id}' and position = 1`);
      const refused = await issue<Refusal<ValidationDetails>>(clinic, { doc_type: 39, invoice_id: old.id });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.details.fields[0]!.path).toBe("invoice.items[1].unit_price");
    });

    test("TasaIVA is never 0: an invoice made without IVA gets no factura (409)", async () => {
      const clinic = await issuer();
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { tax_rate_bps: 0 } })).status).toBe(200);
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const refused = await issue<Refusal<{ reason: string }>>(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver });
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body.details.reason).toBe("tax_rate_zero");
    });

    test("every length the schema bounds: names cut to their element, never ending in a space; a long description whole in DscItem", async () => {
      const clinic = await issuer();
      const description = `${"Hospitalización ".repeat(6)}con monitoreo continuo y fluidoterapia intravenosa durante cuarenta y ocho horas, más controles`.slice(0, 300);
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000, description } as never]);
      const name = `Sociedad Agrícola y Ganadera del Sur ${"X".repeat(2)} Limitada de Inversiones y Servicios`;
      expect(name[39]).toBe(" ");
      const factura = await issued(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver, receiver_name: name });
      const xml = await xmlOf(clinic, factura.id);
      const ted = elementOf(xml, "TED")!;
      expect(textOf(ted, "RSR")).toBe(name.slice(0, 40).trimEnd());
      expect(/<RSR>[^<]* <\/RSR>/.test(ted)).toBe(false);
      expect(/<IT1>[^<]* <\/IT1>/.test(ted)).toBe(false);
      expect(textOf(xml, "NmbItem")!.length).toBeLessThanOrEqual(80);
      expect(textOf(xml, "DscItem")).toBe(description);
      expect(documentProblems(xml)).toEqual([]);
    });
  });

  describe("amounts by the SII's formulas", () => {
    test("the invoice keeps the IVA rate it was made with: a later change of the clinic's rate does not reach its DTE or its PDF", async () => {
      const clinic = await issuer();
      const before = await emitted(clinic, [{ quantity: 1, unit_price: 10_000 }]);
      expect(before).toMatchObject({ tax_rate_bps: 1900, tax_amount: 1_900 });
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { tax_rate_bps: 1000 } })).status).toBe(200);
      const factura = await issued(clinic, { doc_type: 33, invoice_id: before.id, ...facturaReceiver });
      const xml = await xmlOf(clinic, factura.id);
      expect(elementOf(xml, "Totales")).toBe("<Totales><MntNeto>10000</MntNeto><TasaIVA>19</TasaIVA><IVA>1900</IVA><MntTotal>11900</MntTotal></Totales>");
      expect(pdfText(await pdfOf(clinic, factura.id))).toContain("IVA 19%");
      const after = await emitted(clinic, [{ quantity: 1, unit_price: 10_000 }]);
      expect(after).toMatchObject({ tax_rate_bps: 1000, tax_amount: 1_000 });
      const second = await issued(clinic, { doc_type: 33, invoice_id: after.id, ...facturaReceiver });
      expect(textOf(await xmlOf(clinic, second.id), "TasaIVA")).toBe("10");
      expect(pdfText(await pdfOf(clinic, second.id))).toContain("IVA 10%");
      // A draft edited after the change keeps its own rate too.
      const kept = await draft(clinic, [{ quantity: 1, unit_price: 100 }]);
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { tax_rate_bps: 1900 } })).status).toBe(200);
      const edited = await clinic.as<InvoiceView>("PATCH", `/api/v1/billing/invoices/${kept.id}`, { json: { items: [{ description: "x", quantity: 1, unit_price: 10_000 }] } });
      expect(edited.body).toMatchObject({ tax_rate_bps: 1000, tax_amount: 1_000 });
    });

    test("a boleta's lines: MontoItem = round(PrcItem × QtyItem), Σ MontoItem = MntTotal, MntNeto = round(MntTotal / 1.19)", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 3, unit_price: 999 }]);
      expect(invoice.total_amount).toBe(3_566);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      const xml = await xmlOf(clinic, boleta.id);
      const [line] = detailsOf(xml);
      expect(textOf(line!, "MontoItem")).toBe("3566");
      expect(roundedProduct(textOf(line!, "PrcItem")!, textOf(line!, "QtyItem")!)).toBe(3566n);
      expect(elementOf(xml, "Totales")).toBe(`<Totales><MntNeto>${invoice.net_amount}</MntNeto><IVA>${invoice.tax_amount}</IVA><MntTotal>3566</MntTotal></Totales>`);
      expect(boletaNet(3566n, 1900n)).toBe(BigInt(invoice.net_amount));
      expect(formulaProblems(xml)).toEqual([]);
    });

    test("property: for random lines and rates, the XML of a boleta and of a factura satisfies every formula", () => {
      const line = fc.record({ quantity: fc.integer({ min: 1, max: 100_000 }), unit_price: fc.integer({ min: 1, max: 10_000_000 }) });
      fc.assert(
        fc.property(fc.array(line, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 3_000 }), (items, rate) => {
          const totals = invoiceTotals(items, rate);
          for (const docType of [39, 33] as const) {
            const content: DteContent = {
              docType,
              folio: 1,
              issueDate: "2026-01-15",
              signedAt: "2026-01-15T09:00:00",
              issuer: { rut: "76.086.428-5", legalName: "Clínica", giro: "Veterinaria", activityCode: "750000", address: "Calle 1", commune: "Ñuñoa" },
              receiver: { rut: "76.123.456-0", name: "Receptor", giro: "Giro", address: "Calle 2", commune: "Macul" },
              amounts: { net: totals.net_amount, tax: totals.tax_amount, total: totals.total_amount, taxRateBps: rate },
              lines: items.map((item, i) => ({ description: `Item ${i}`, quantity: item.quantity, unitPrice: item.unit_price, total: item.quantity * item.unit_price })),
            };
            const xml = buildDte(content, "<TED/>");
            expect(formulaProblems(xml)).toEqual([]);
            expect(BigInt(textOf(xml, "MntTotal")!)).toBe(BigInt(totals.total_amount));
            if (docType === 39) expect(BigInt(textOf(xml, "MntNeto")!)).toBe(boletaNet(BigInt(totals.total_amount), BigInt(rate)));
          }
        }),
        { numRuns: 400 },
      );
    }, 60_000);

    test("property: random invoices issued through the API carry the formulas in their signed XML", async () => {
      const clinic = await issuer();
      const line = fc.record({ quantity: fc.integer({ min: 1, max: 999 }), unit_price: fc.integer({ min: 1, max: 2_000_000 }) });
      await fc.assert(
        fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 5 }), fc.constantFrom(39, 33), async (items, docType) => {
          const invoice = await emitted(clinic, items);
          const document = await issued(clinic, { doc_type: docType, invoice_id: invoice.id, ...(docType === 33 ? facturaReceiver : {}) });
          const xml = await xmlOf(clinic, document.id);
          expect(formulaProblems(xml)).toEqual([]);
          expect(Number(textOf(xml, "MntTotal"))).toBe(invoice.total_amount);
        }),
        { numRuns: 12 },
      );
    }, 60_000);
  });

  describe("no sale undone without its nota de crédito", () => {
    test("voiding an invoice with a boleta is 409 TAX_DOCUMENT_ISSUED naming it; with issue_credit_note its 61 (CodRef 1) and the void happen together", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 5_000 }]);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      const refused = await clinic.as<Refusal<Record<string, unknown>>>("POST", `/api/v1/billing/invoices/${invoice.id}/void`);
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body).toMatchObject({ code: "TAX_DOCUMENT_ISSUED", details: { document_id: boleta.id, doc_type: 39, folio: boleta.folio } });
      expect((await invoiceOf(clinic, invoice.id)).status).toBe("emitted");
      const voided = await clinic.as<InvoiceView>("POST", `/api/v1/billing/invoices/${invoice.id}/void`, { json: { issue_credit_note: true } });
      expect(voided.status, voided.text).toBe(200);
      expect(voided.body).toMatchObject({ status: "void", credited_amount: 5_950, balance: 0 });
      const [note] = await t.database.query<{ id: string; reference_code: number; signed_xml: string }>("select id, reference_code, signed_xml from tax_documents where referenced_document_id = $1", [boleta.id]);
      expect(note!.reference_code).toBe(1);
      expect(elementOf(note!.signed_xml, "Referencia")).toContain(`<TpoDocRef>39</TpoDocRef><FolioRef>${boleta.folio}</FolioRef><FchRef>2026-01-15</FchRef><CodRef>1</CodRef>`);
    });

    test("a void whose nota de crédito cannot be issued changes nothing", async () => {
      const clinic = await registerClinic(t);
      await makeIssuer(clinic, [39]);
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 5_000 }]);
      await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      const documents = await count("tax_documents");
      const refused = await clinic.as<Refusal<unknown>>("POST", `/api/v1/billing/invoices/${invoice.id}/void`, { json: { issue_credit_note: true } });
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body.code).toBe("NO_FOLIOS");
      expect(await count("tax_documents")).toBe(documents);
      expect(await invoiceOf(clinic, invoice.id)).toMatchObject({ status: "emitted", credited_amount: 0 });
    });

    test("refunds of a sale with a factura issue their 61 in the same transaction: partial ones CodRef 3, the rest credits it in full", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 2, unit_price: 10_000 }]);
      const payment = await pay(clinic, invoice.id, 23_800);
      const factura = await issued(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver });
      const refund = await clinic.as<{ credit_note_id: string }>("POST", "/api/v1/billing/refunds", { json: { payment_id: payment.body.id, amount: 1_190, reason: "Descuento aplicado tarde" } });
      expect(refund.status, refund.text).toBe(201);
      const note = (await clinic.as<TaxDocumentView>("GET", `/api/v1/billing/sii/documents/${refund.body.credit_note_id}`)).body;
      expect(note).toMatchObject({ doc_type: 61, reference_code: 3, referenced_document_id: factura.id, net_amount: 1_000, tax_amount: 190, total_amount: 1_190 });
      const xml = await xmlOf(clinic, note.id);
      expect(elementOf(xml, "Referencia")).toContain("<CodRef>3</CodRef><RazonRef>Descuento aplicado tarde</RazonRef>");
      expect(formulaProblems(xml)).toEqual([]);
      expect(await invoiceOf(clinic, invoice.id)).toMatchObject({ status: "paid", paid_amount: 22_610, credited_amount: 1_190, balance: 0 });
      // An amount no net plus its IVA gives is refused with the nearest that are, and nothing is written.
      const refunds = await count("refunds");
      const odd = await clinic.as<Refusal<{ reason: string; nearest: number[] }>>("POST", "/api/v1/billing/refunds", { json: { payment_id: payment.body.id, amount: 3 } });
      expect(odd.status, odd.text).toBe(409);
      expect(odd.body.details).toMatchObject({ reason: "amount_not_creditable", nearest: [2, 4] });
      expect(await count("refunds")).toBe(refunds);
      const rest = await clinic.as<{ credit_note_id: string }>("POST", "/api/v1/billing/refunds", { json: { payment_id: payment.body.id, amount: 22_610 } });
      expect(rest.status, rest.text).toBe(201);
      expect((await clinic.as<TaxDocumentView>("GET", `/api/v1/billing/sii/documents/${rest.body.credit_note_id}`)).body).toMatchObject({ reference_code: 3, total_amount: 22_610 });
      expect(await invoiceOf(clinic, invoice.id)).toMatchObject({ status: "credited", paid_amount: 0, credited_amount: 23_800, balance: 0 });
    });

    test("POST 61 with code 2 corrects the receiver's text (amounts 0) and with code 3 credits lines; the credits of a document never exceed it (409)", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 3, unit_price: 10_000 }]);
      const factura = await issued(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver });
      const text = await issued(clinic, { doc_type: 61, code: 2, referenced_document_id: factura.id, receiver_giro: "Agricultura orgánica", receiver_address: "Camino Real 47" });
      expect(text).toMatchObject({ reference_code: 2, total_amount: 0, receiver_giro: "Agricultura orgánica", receiver_address: "Camino Real 47", receiver_name: facturaReceiver.receiver_name });
      const textXml = await xmlOf(clinic, text.id);
      expect(elementOf(textXml, "Totales")).toBe("<Totales><MntTotal>0</MntTotal></Totales>");
      expect(textOf(textXml, "GiroRecep")).toBe("Agricultura orgánica");
      expect(elementOf(textXml, "Referencia")).toContain("<CodRef>2</CodRef>");
      const lines = await issued(clinic, { doc_type: 61, code: 3, referenced_document_id: factura.id, lines: [{ description: "Consulta no realizada", quantity: 1, unit_price: 10_000 }] });
      expect(lines).toMatchObject({ reference_code: 3, net_amount: 10_000, tax_amount: 1_900, total_amount: 11_900 });
      expect(formulaProblems(await xmlOf(clinic, lines.id))).toEqual([]);
      expect(await invoiceOf(clinic, invoice.id)).toMatchObject({ credited_amount: 11_900, balance: 23_800 });
      const documents = await count("tax_documents");
      const tooMuch = await issue<Refusal<{ reason: string; remaining: number }>>(clinic, { doc_type: 61, code: 3, referenced_document_id: factura.id, lines: [{ description: "Todo", quantity: 3, unit_price: 10_000 }] });
      expect(tooMuch.status, tooMuch.text).toBe(409);
      expect(tooMuch.body.details).toMatchObject({ reason: "credit_exceeds_document", remaining: 23_800 });
      const full = await issue<Refusal<{ reason: string }>>(clinic, { doc_type: 61, code: 1, referenced_document_id: factura.id });
      expect(full.status, full.text).toBe(409);
      expect(full.body.details.reason).toBe("already_credited");
      expect(await count("tax_documents")).toBe(documents);
      // Code 2 has nothing to correct on a boleta; lines go only with code 3.
      const other = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: other.id });
      expect((await issue(clinic, { doc_type: 61, code: 2, referenced_document_id: boleta.id, receiver_name: "X" })).status).toBe(422);
      expect((await issue(clinic, { doc_type: 61, referenced_document_id: boleta.id, lines: [{ description: "x", quantity: 1, unit_price: 1 }] })).status).toBe(422);
    });
  });

  describe("issuer and receiver data as the SII marks them", () => {
    test("a factura needs the issuer's address and comuna (409 naming them); a boleta does not", async () => {
      const clinic = await issuer();
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { address: null, commune: null } })).status).toBe(200);
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const refused = await issue<Refusal<{ reason: string; missing: string[] }>>(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver });
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body.details).toEqual({ reason: "issuer_data_missing", missing: ["address", "commune"] });
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      // Without a comuna the printed copy names no SII office (never "S.I.I. - " alone).
      expect(pdfText(await pdfOf(clinic, boleta.id))).not.toContain("S.I.I.");
    });
  });

  describe("environments apart", () => {
    test("a production CAF from folio 1 is stored beside a test one; folios are taken within one environment, and a 61 never borrows another's", async () => {
      const clinic = await registerClinic(t);
      await makeIssuer(clinic, [33, 61]);
      // The stand-in SII signs only test CAFs: this one stands for the SII's production CAF of the same range.
      await t.database.query("update sii_cafs set environment = 'production' where clinic_id = $1 and doc_type = 33", [clinic.clinic.id]);
      const again = await clinic.as<{ environment: string; range_from: number }>("POST", "/api/v1/billing/sii/cafs", { json: { xml: cafFor(33) } });
      expect(again.status, again.text).toBe(201);
      expect(again.body).toMatchObject({ environment: "test", range_from: 1 });
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const factura = await issued(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver });
      expect(factura).toMatchObject({ environment: "production", folio: 1 });
      const noProductionFolios = await issue<Refusal<{ environment: string }>>(clinic, { doc_type: 61, referenced_document_id: factura.id });
      expect(noProductionFolios.status, noProductionFolios.text).toBe(409);
      expect(noProductionFolios.body).toMatchObject({ code: "NO_FOLIOS", details: { environment: "production" } });
      await t.database.query("update sii_cafs set environment = 'production' where clinic_id = $1 and doc_type = 61", [clinic.clinic.id]);
      expect(await issued(clinic, { doc_type: 61, referenced_document_id: factura.id })).toMatchObject({ environment: "production", folio: 1 });
      const second = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      expect(await issued(clinic, { doc_type: 33, invoice_id: second.id, ...facturaReceiver })).toMatchObject({ environment: "production", folio: 2 });
    });

    test("outside production a missing resolution date is 409, never invented", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { sii_resolution_date: null } })).status).toBe(200);
      const envelope = await t.request<Refusal<{ missing: string[] }>>("GET", `/api/v1/billing/sii/documents/${boleta.id}/envelope`, { token: clinic.token });
      expect(envelope.status, envelope.text).toBe(409);
      expect(envelope.body.details.missing).toEqual(["sii_resolution_date"]);
    });
  });

  describe("the printed copy", () => {
    test("framed RUT/type/folio box with the SII office of the comuna under it, the timbre within the SII's sizes on letter and 80 mm, a boleta's RSR its receiver's RUT", async () => {
      const clinic = await issuer();
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { commune: "La Reina" } })).status).toBe(200);
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      expect(textOf(elementOf(await xmlOf(clinic, boleta.id), "TED")!, "RSR")).toBe("66666666-6");
      for (const format of ["letter", "thermal"]) {
        const path = await pdfOf(clinic, boleta.id, format);
        const text = pdfText(path);
        expect(text).toContain("S.I.I. - ÑUÑOA");
        expect(text).not.toContain("S.I.I. - LA REINA");
        // pdfimages: the timbre's pixels and resolution give its printed size.
        const images = run(["pdfimages", "-list", path]).output.split("\n").filter((line) => /^\s*\d+\s+\d+\s+image/.test(line));
        expect(images).toHaveLength(1);
        const [, , , width, height, , , , , , , , xPpi, yPpi] = images[0]!.trim().split(/\s+/);
        const [widthCm, heightCm] = [(Number(width) / Number(xPpi)) * 2.54, (Number(height) / Number(yPpi)) * 2.54];
        expect(widthCm).toBeGreaterThanOrEqual(5);
        expect(widthCm).toBeLessThanOrEqual(9.01);
        expect(heightCm).toBeGreaterThanOrEqual(2);
        expect(heightCm).toBeLessThanOrEqual(4.01);
      }
      // The box is a stroked closed rectangle in the page's content (m, three l, h, S).
      const letter = Buffer.from(await raw(clinic, `${boleta.id}/pdf?format=letter`));
      expect(pageContents(letter)).toMatch(/1\.5 w\n[\s\S]{0,200}?0 0 m\n0 [\d.]+ l\n[\d.]+ [\d.]+ l\n[\d.]+ 0 l\nh\nS\n/);
    }, 60_000);

    test("a nota de crédito's FchRef is the referenced document's FchEmis, copied, whatever the clinic's time zone is now", async () => {
      const clinic = await issuer({ timezone: "Pacific/Kiritimati" });
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const boleta = await issued(clinic, { doc_type: 39, invoice_id: invoice.id });
      const fchEmis = textOf(await xmlOf(clinic, boleta.id), "FchEmis");
      expect(fchEmis).toBe("2026-01-16");
      expect((await clinic.as("PATCH", "/api/v1/clinic", { json: { timezone: "UTC" } })).status).toBe(200);
      const credit = await issued(clinic, { doc_type: 61, referenced_document_id: boleta.id });
      expect(textOf(elementOf(await xmlOf(clinic, credit.id), "Referencia")!, "FchRef")).toBe("2026-01-16");
    });
  });

  describe("secrets the key cannot open", () => {
    test("a CAF key or certificate key sealed under another SECRETS_KEY: 409 saying so, nothing written, no folio used", async () => {
      const clinic = await issuer();
      const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
      const other = createSecretBox("another-secrets-key-of-at-least-32-bytes");
      const [caf] = await t.database.query<{ id: string; clinic_id: string; next_folio: number }>("select id, clinic_id, next_folio from sii_cafs where doc_type = 39 and clinic_id = $1", [clinic.clinic.id]);
      await t.database.query("update sii_cafs set private_key_encrypted = $1 where id = $2", [other.seal("-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----"), caf!.id]);
      const documents = await count("tax_documents");
      const refused = await issue<Refusal<{ reason: string }>>(clinic, { doc_type: 39, invoice_id: invoice.id });
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body.details.reason).toBe("secrets_key_mismatch");
      expect(refused.text).toContain("CAF key");
      expect(await count("tax_documents")).toBe(documents);
      const [after] = await t.database.query<{ next_folio: number }>("select next_folio from sii_cafs where id = $1", [caf!.id]);
      expect(after!.next_folio).toBe(caf!.next_folio);
      await t.database.query("update sii_certificates set private_key_encrypted = $1 where clinic_id = $2", [other.seal("x"), caf!.clinic_id]);
      const certificate = await issue<Refusal<{ reason: string }>>(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver });
      expect(certificate.status, certificate.text).toBe(409);
      expect(certificate.body.details.reason).toBe("secrets_key_mismatch");
      expect(certificate.text).toContain("certificate key");
      expect(t.logLines.join("\n")).not.toContain("PRIVATE KEY");
    });
  });
});
