import { describe, expect, test } from "bun:test";
import { createPublicKey, createVerify } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cafPublicKey, cafSignedBy } from "../../src/modules/billing/sii/caf";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import { elementOf, textOf, withoutWhitespaceBetweenTags } from "../../src/modules/billing/sii/xml";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { emitted } from "./helpers";
import { authority, makeIssuer, siiConfig } from "./sii-fixtures";

/**
 * Checks against the SII's own artefacts (schemas, example envelope, CAF keys) and the standard
 * tools (xmllint, xmlsec1, pdftoppm, zxing-cpp). SII_SCHEMAS_DIR names the folder (default: the
 * shared folder beside the repository); without it these tests say so and skip, in CI they fail.
 */
const SII_DIR = process.env.SII_SCHEMAS_DIR ? resolve(process.env.SII_SCHEMAS_DIR) : resolve(import.meta.dir, "../../../shared/sii");
const available = existsSync(join(SII_DIR, "xsd", "DTE_v10.xsd"));
if (!available) {
  if (process.env.CI) test("the SII's artefacts are present (SII_SCHEMAS_DIR)", () => expect(`${SII_DIR}/xsd/DTE_v10.xsd`).toBe("an existing file"));
  else console.warn(`SII artefact tests skipped: no SII schemas at ${SII_DIR} (set SII_SCHEMAS_DIR)`);
}
const suite = available ? describe : describe.skip;
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

const work = mkdtempSync(join(tmpdir(), "sii-artefacts-"));
let fileCount = 0;
const file = (content: string | Uint8Array, name = "doc.xml") => {
  const path = join(work, `${fileCount++}-${name}`);
  writeFileSync(path, typeof content === "string" ? Buffer.from(content, "latin1") : content);
  return path;
};
const run = (command: string[]) => {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  return { ok: result.exitCode === 0, output: `${result.stdout.toString()}${result.stderr.toString()}` };
};
const xmllint = (xml: string, schema: string) => run(["xmllint", "--noout", "--schema", join(SII_DIR, "xsd", schema), file(xml)]);
/** xmlsec1 on a standalone DTE (the Documento's signature) or an envelope (the SetDTE's, the root's own Signature). */
const verifyDte = (xml: string) => run(["xmlsec1", "--verify", "--id-attr:ID", "Documento", file(xml)]);
const verifyEnvelope = (xml: string) => run(["xmlsec1", "--verify", "--id-attr:ID", "SetDTE", "--node-xpath", "/*/*[local-name()='Signature']", file(xml)]);
/** A DTE taken out of its envelope as the SII checks it: the element as written, with an XML declaration. */
const dtesIn = (envelope: string) => [...envelope.matchAll(/<DTE [\s\S]*?<\/DTE>/g)].map(([dte]) => `<?xml version="1.0" encoding="ISO-8859-1"?>\n${dte}`);
const fromLatin1 = (bytes: ArrayBuffer) => Buffer.from(bytes).toString("latin1");

/** A TED's FRMT verifies with the public key of the CAF inside it, over its DD in the SII's canonical form. */
function tedVerifies(ted: string): boolean {
  const dd = withoutWhitespaceBetweenTags(elementOf(ted, "DD")!);
  const frmt = textOf(ted, "FRMT")!.replace(/\s/g, "");
  return createVerify("RSA-SHA1").update(Buffer.from(dd, "latin1")).verify(cafPublicKey(elementOf(ted, "CAF")!), Buffer.from(frmt, "base64"));
}

suite("SII artefacts", () => {
  let t: TestApp;
  let owner: ClinicSession;
  useClinicApp((made) => ({ t, owner } = made), { config: siiConfig() });

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
    const factura = await issue({ doc_type: 33, invoice_id: a.id, receiver_rut: "76.123.456-0", receiver_name: "Agrícola Ñandú & Cía. Ltda.", receiver_giro: "Agricultura", receiver_address: "Camino Real 45", receiver_commune: "Peñalolén" });
    const boleta = await issue({ doc_type: 39, invoice_id: b.id });
    const credit = await issue({ doc_type: 61, referenced_document_id: factura.id });
    expect([factura.environment, boleta.environment, credit.environment]).toEqual(["test", "test", "test"]);

    for (const document of [factura, boleta, credit]) {
      const xml = await raw(`/api/v1/billing/sii/documents/${document.id}/xml`);
      expect(xml.type).toBe("application/xml; charset=ISO-8859-1");
      const dte = fromLatin1(xml.bytes);
      expect(dte.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>')).toBe(true);
      if (document.doc_type !== 39) expect(xmllint(dte, "DTE_v10.xsd")).toMatchObject({ ok: true });
      expect(verifyDte(dte)).toMatchObject({ ok: true });
      const ted = elementOf(dte, "TED")!;
      expect(tedVerifies(ted)).toBe(true);
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
      const image = run(["pdftoppm", "-r", "200", "-gray", "-singlefile", pdfPath, pdfPath]);
      expect(image.ok, image.output).toBe(true);
      const decoded = run([PYTHON, "-c", DECODE, `${pdfPath}.pgm`]);
      expect(decoded.ok, decoded.output).toBe(true);
      expect(Buffer.from(decoded.output.trim(), "hex").toString("latin1")).toBe(ted);
    }
    expect(fromLatin1((await raw(`/api/v1/billing/sii/documents/${credit.id}/xml`)).bytes)).toContain(`<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>33</TpoDocRef><FolioRef>${factura.folio}</FolioRef><FchRef>2026-01-15</FchRef><CodRef>1</CodRef>`);
  });

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

/** Reads the page image (pdftoppm's 8-bit PGM) with zxing-cpp and prints the PDF417's bytes in hex. */
const DECODE = `
import sys, zxingcpp
import numpy as np
data = open(sys.argv[1], 'rb').read()
magic, width, height, maxval = data.split(maxsplit=4)[:4]
width, height = int(width), int(height)
image = np.frombuffer(data[len(data) - width * height:], dtype=np.uint8).reshape(height, width)
results = [r for r in zxingcpp.read_barcodes(image) if r.format == zxingcpp.BarcodeFormat.PDF417 and r.valid]
if len(results) != 1: sys.exit('expected one PDF417, found %d' % len(results))
print(results[0].bytes.hex())
`;
