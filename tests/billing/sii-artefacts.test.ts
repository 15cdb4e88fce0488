import { expect, test } from "bun:test";
import { createPublicKey, createVerify } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cafPublicKey, cafSignedBy } from "../../src/modules/billing/sii/caf";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import { elementOf, textOf, withoutWhitespaceBetweenTags } from "../../src/modules/billing/sii/xml";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { emitted } from "./helpers";
import { barcodeOf, dtesIn, file, fromLatin1, run, SII_DIR, siiSuite, tedProblems, useSiiChecks, verifyDte, verifyEnvelope, xmllint } from "./sii-checks";
import { authority, facturaReceiver, makeIssuer, siiConfig } from "./sii-fixtures";

/**
 * Checks against the SII's own artefacts (schemas, example envelope, CAF keys) and the standard
 * tools (xmllint, xmlsec1, pdftoppm, zxing-cpp); without the SII's schemas these tests say so and
 * skip, in CI they fail (tests/billing/sii-checks.ts).
 */

/** A TED's FRMT verifies with the public key of the CAF inside it, over its DD in the SII's canonical form. */
function tedVerifies(ted: string): boolean {
  const dd = withoutWhitespaceBetweenTags(elementOf(ted, "DD")!);
  const frmt = textOf(ted, "FRMT")!.replace(/\s/g, "");
  return createVerify("RSA-SHA1").update(Buffer.from(dd, "latin1")).verify(cafPublicKey(elementOf(ted, "CAF")!), Buffer.from(frmt, "base64"));
}

siiSuite("SII artefacts", () => {
  let t: TestApp;
  let owner: ClinicSession;
  useClinicApp((made) => ({ t, owner } = made), { config: siiConfig() });
  useSiiChecks(() => t);

  const get = async (path: string) => {
    const r = await t.request("GET", path, { token: owner.token });
    expect(r.status, r.text).toBe(200);
    return r;
  };
  const raw = async (path: string) => {
    const response = await t.app.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${owner.token}` } }));
    expect(response.status).toBe(200);
    return { type: response.headers.get("content-type"), bytes: await response.arrayBuffer() };
  };
  const issue = async (json: Record<string, unknown>) => {
    const r = await owner.as<TaxDocumentView>("POST", "/api/v1/billing/sii/documents", { json });
    expect(r.status, r.text).toBe(201);
    return r.body;
  };

  test("known answer: the SII's example envelope validates, its CAF's FRMA verifies with the IDK 100 key and its TED's FRMT with the CAF key", () => {
    const example = readFileSync(join(SII_DIR, "kat", "F60T33-ejemplo-oficial-SII.xml")).toString("latin1");
    expect(xmllint(example, "EnvioDTE_v10.xsd").ok).toBe(true);
    const caf = elementOf(example, "CAF")!;
    const idk100 = createPublicKey(run(["openssl", "x509", "-in", join(SII_DIR, "kat", "100.cer"), "-pubkey", "-noout"]).output);
    expect(cafSignedBy(caf, idk100)).toBe(true);
    expect(tedVerifies(elementOf(example, "TED")!)).toBe(true);
    // The canonical form is pinned: with the whitespace between tags left in, neither verifies.
    const dd = elementOf(example, "DD")!;
    expect(createVerify("RSA-SHA1").update(Buffer.from(dd, "latin1")).verify(cafPublicKey(caf), Buffer.from(textOf(example, "FRMT")!.replace(/\s/g, ""), "base64"))).toBe(false);
  });

  test("a factura, a boleta and a nota de crédito validate, verify (TED and both signatures) and print a barcode that decodes to the TED", async () => {
    await makeIssuer(owner);
    const a = await emitted(owner, [{ quantity: 2, unit_price: 12_500 }]);
    const b = await emitted(owner, [{ quantity: 1, unit_price: 15_000 }, { quantity: 3, unit_price: 3_333 }]);
    const factura = await issue({ doc_type: 33, invoice_id: a.id, ...facturaReceiver, receiver_name: "Agrícola Ñandú & Cía. Ltda." });
    const boleta = await issue({ doc_type: 39, invoice_id: b.id });
    const credit = await issue({ doc_type: 61, referenced_document_id: factura.id });
    const boletaCredit = await issue({ doc_type: 61, referenced_document_id: boleta.id });
    expect([factura.environment, boleta.environment, credit.environment, boletaCredit.environment]).toEqual(["test", "test", "test", "test"]);

    for (const document of [factura, boleta, credit, boletaCredit]) {
      const xml = await raw(`/api/v1/billing/sii/documents/${document.id}/xml`);
      expect(xml.type).toBe("application/xml; charset=ISO-8859-1");
      const dte = fromLatin1(xml.bytes);
      expect(dte.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>')).toBe(true);
      if (document.doc_type !== 39) expect(xmllint(dte, "DTE_v10.xsd")).toMatchObject({ ok: true });
      expect(verifyDte(dte)).toMatchObject({ ok: true });
      const ted = elementOf(dte, "TED")!;
      expect(tedVerifies(ted)).toBe(true);
      expect(tedProblems(dte)).toEqual([]);
      expect(cafSignedBy(elementOf(ted, "CAF")!, createPublicKey(authority.publicKeyPem))).toBe(true);
      expect(textOf(ted, "MNT")).toBe(String(document.total_amount));

      const envelope = fromLatin1((await raw(`/api/v1/billing/sii/documents/${document.id}/envelope`)).bytes);
      expect(xmllint(envelope, document.doc_type === 39 ? "EnvioBOLETA_v11.xsd" : "EnvioDTE_v10.xsd")).toMatchObject({ ok: true });
      expect(verifyEnvelope(envelope)).toMatchObject({ ok: true });
      const [inside] = dtesIn(envelope);
      expect(verifyDte(inside!)).toMatchObject({ ok: true });
      expect(textOf(envelope, "NroResol")).toBe("0");

      const pdf = await raw(`/api/v1/billing/sii/documents/${document.id}/pdf`);
      expect(pdf.type).toBe("application/pdf");
      const pdfPath = file(new Uint8Array(pdf.bytes), "doc.pdf");
      const text = run(["pdftotext", "-layout", pdfPath, "-"]).output;
      for (const phrase of ["Timbre Electrónico SII", "Res. N° 0 de 2026", "Verifique documento: www.sii.cl", "SIN VALOR LEGAL", `N° ${document.folio}`]) expect(text).toContain(phrase);
      expect(barcodeOf(pdfPath)).toBe(ted);
    }
    expect(fromLatin1((await raw(`/api/v1/billing/sii/documents/${credit.id}/xml`)).bytes)).toContain(`<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>33</TpoDocRef><FolioRef>${factura.folio}</FolioRef><FchRef>2026-01-15</FchRef><CodRef>1</CodRef>`);
  }, 60_000);

  test("a day's boletas in one EnvioBOLETA and facturas in one EnvioDTE: valid and signed", async () => {
    for (let i = 0; i < 2; i++) {
      const invoice = await emitted(owner, [{ quantity: 1, unit_price: 1_000 + i }]);
      await issue({ doc_type: 39, invoice_id: invoice.id });
    }
    const boletas = fromLatin1((await raw("/api/v1/billing/sii/envelopes?doc_type=39&date=2026-01-15")).bytes);
    expect(xmllint(boletas, "EnvioBOLETA_v11.xsd")).toMatchObject({ ok: true });
    expect(verifyEnvelope(boletas)).toMatchObject({ ok: true });
    expect(dtesIn(boletas).length).toBe(Number(textOf(boletas, "NroDTE")));
    for (const dte of dtesIn(boletas)) expect(verifyDte(dte)).toMatchObject({ ok: true });
    const facturas = fromLatin1((await raw("/api/v1/billing/sii/envelopes?doc_type=33&date=2026-01-15")).bytes);
    expect(xmllint(facturas, "EnvioDTE_v10.xsd")).toMatchObject({ ok: true });
    expect(verifyEnvelope(facturas)).toMatchObject({ ok: true });
    expect((await t.request("GET", "/api/v1/billing/sii/envelopes?doc_type=39&date=2026-01-16", { token: owner.token })).status).toBe(404);
    await get("/api/v1/billing/sii/cafs");
  });

  test("a tampered amount fails the document signature, the envelope signature and the TED", async () => {
    const invoice = await emitted(owner, [{ quantity: 1, unit_price: 10_000 }]);
    const boleta = await issue({ doc_type: 39, invoice_id: invoice.id });
    const envelope = fromLatin1((await raw(`/api/v1/billing/sii/documents/${boleta.id}/envelope`)).bytes);
    const [dte] = dtesIn(envelope);
    const tampered = dte!.replace("<MntTotal>11900</MntTotal>", "<MntTotal>1190</MntTotal>");
    expect(tampered).not.toBe(dte);
    expect(verifyDte(dte!).ok).toBe(true);
    expect(verifyDte(tampered).ok).toBe(false);
    expect(verifyEnvelope(envelope.replace("<MntTotal>11900</MntTotal>", "<MntTotal>1190</MntTotal>")).ok).toBe(false);
    const ted = elementOf(dte!, "TED")!;
    expect(tedVerifies(ted)).toBe(true);
    expect(tedVerifies(ted.replace("<MNT>11900</MNT>", "<MNT>1190</MNT>"))).toBe(false);
  });
});

