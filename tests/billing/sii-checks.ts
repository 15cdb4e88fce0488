/**
 * The checks every SII test runs on every document it issues, with the SII's own tools and rules:
 * the SII's XML schemas (xmllint --schema: the DTE alone for 33 and 61, and every type inside its
 * envelope, EnvioDTE or EnvioBOLETA), both XMLDSig signatures (xmlsec1), and the TED in the SII's
 * canonical form: the DD read as XML, flattened and written again with the five XML specials
 * escaped (as LibreDTE verifies a timbre), which must be the DD stored, and whose FRMT must verify
 * with the key of the CAF inside it. `useSiiChecks` runs them after each test on every signed
 * document in the database not checked yet, so a new document type gets all three for free.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { createVerify } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cafPublicKey } from "../../src/modules/billing/sii/caf";
import { openPkcs12 } from "../../src/modules/billing/sii/certificate";
import { buildEnvelope } from "../../src/modules/billing/sii/envelope";
import type { TestApp } from "../helpers/app";
import { certificate, CERT_PASSWORD } from "./sii-fixtures";

/** SII_SCHEMAS_DIR names the folder (default: the shared folder beside the repository, or beside its worktrees' folder). */
export const SII_DIR = process.env.SII_SCHEMAS_DIR
  ? resolve(process.env.SII_SCHEMAS_DIR)
  : ([resolve(import.meta.dir, "../../../shared/sii"), resolve(import.meta.dir, "../../../../shared/sii")].find((dir) => existsSync(join(dir, "xsd"))) ?? resolve(import.meta.dir, "../../../shared/sii"));
export const siiArtefactsAvailable = existsSync(join(SII_DIR, "xsd", "DTE_v10.xsd"));
if (!siiArtefactsAvailable) {
  if (process.env.CI) test("the SII's artefacts are present (SII_SCHEMAS_DIR)", () => expect(`${SII_DIR}/xsd/DTE_v10.xsd`).toBe("an existing file"));
  else console.warn(`SII schema checks skipped: no SII schemas at ${SII_DIR} (set SII_SCHEMAS_DIR)`);
}
/** `describe`, or `describe.skip` without the SII's artefacts. */
export const siiSuite = siiArtefactsAvailable ? describe : describe.skip;

/** The scratch folder of the test file under way: made at its first file, removed after its tests (useSiiChecks). */
let work: string | undefined;
let fileCount = 0;
/** A file in the test's scratch folder; text is written in ISO-8859-1, as the SII reads it. */
export const file = (content: string | Uint8Array, name = "doc.xml") => {
  work ??= mkdtempSync(join(tmpdir(), "sii-checks-"));
  const path = join(work, `${fileCount++}-${name}`);
  writeFileSync(path, typeof content === "string" ? Buffer.from(content, "latin1") : content);
  return path;
};
export const run = (command: string[]) => {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  return { ok: result.exitCode === 0, output: `${result.stdout.toString()}${result.stderr.toString()}` };
};
export const fromLatin1 = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes as ArrayBuffer).toString("latin1");
export const xmllint = (xml: string, schema: string) => run(["xmllint", "--noout", "--schema", join(SII_DIR, "xsd", schema), file(xml)]);
/** xmlsec1 on a standalone DTE (the Documento's signature). */
export const verifyDte = (xml: string) => run(["xmlsec1", "--verify", "--id-attr:ID", "Documento", file(xml)]);
/** xmlsec1 on an envelope (the SetDTE's signature, the root's own Signature). */
export const verifyEnvelope = (xml: string) => run(["xmlsec1", "--verify", "--id-attr:ID", "SetDTE", "--node-xpath", "/*/*[local-name()='Signature']", file(xml)]);
/** A DTE taken out of its envelope as the SII checks it: the element as written, with an XML declaration. */
export const dtesIn = (envelope: string) => [...envelope.matchAll(/<DTE [\s\S]*?<\/DTE>/g)].map(([dte]) => `<?xml version="1.0" encoding="ISO-8859-1"?>\n${dte}`);

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const decode = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, name: string) =>
    name.startsWith("#x") || name.startsWith("#X") ? String.fromCharCode(parseInt(name.slice(2), 16)) : name.startsWith("#") ? String.fromCharCode(Number(name.slice(1))) : ENTITIES[name]!,
  );
/** The SII's canonical escaping of text and attribute values: all five XML specials. */
const escape5 = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/**
 * An element of a DTE (the DD) read as XML and written in the SII's canonical form: no whitespace
 * between tags, texts and attribute values with the five specials escaped.
 */
export function canonicalForm(xml: string, name = "DD"): string {
  const start = xml.indexOf(`<${name}>`);
  const end = xml.indexOf(`</${name}>`, start);
  if (start < 0 || end < 0) throw new Error(`no <${name}>`);
  const source = xml.slice(start, end + name.length + 3);
  let out = "";
  for (const token of source.matchAll(/<(\/?)([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*"[^"]*")*)\s*(\/?)>|([^<]+)/g)) {
    const [, closing, tag, attributes, selfClosing, text] = token;
    if (text !== undefined) {
      if (text.trim()) out += escape5(decode(text));
      continue;
    }
    const attrs = [...(attributes ?? "").matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)].map(([, key, value]) => ` ${key}="${escape5(decode(value!))}"`).join("");
    out += closing ? `</${tag}>` : `<${tag}${attrs}>${selfClosing ? `</${tag}>` : ""}`;
  }
  return out;
}

/** What is wrong with a document's TED, checked as the SII checks it (empty: nothing). */
export function tedProblems(dte: string): string[] {
  const ted = /<TED version="1.0">[\s\S]*?<\/TED>/.exec(dte)?.[0];
  if (!ted) return ["no TED"];
  const stored = /<DD>[\s\S]*<\/DD>/.exec(ted)![0];
  const canonical = canonicalForm(ted);
  const problems: string[] = [];
  if (stored !== canonical) problems.push(`the stored DD is not in the SII's canonical form:\n  stored    ${stored.slice(0, 300)}\n  canonical ${canonical.slice(0, 300)}`);
  const frmt = /<FRMT[^>]*>([^<]+)<\/FRMT>/.exec(ted)![1]!.replace(/\s/g, "");
  const caf = /<CAF version="1.0">[\s\S]*?<\/CAF>/.exec(ted)![0];
  if (!createVerify("RSA-SHA1").update(Buffer.from(canonical, "latin1")).verify(cafPublicKey(caf), Buffer.from(frmt, "base64"))) problems.push("the TED's FRMT does not verify over the canonical DD");
  return problems;
}

let envelopeSigner: ReturnType<typeof openPkcs12> | undefined;

/** xmllint over many files at once: the files that do not validate, with what it said of each. */
function schemaFailures(paths: string[], schema: string): Map<string, string> {
  const failures = new Map<string, string>();
  if (!paths.length) return failures;
  const { output } = run(["xmllint", "--noout", "--schema", join(SII_DIR, "xsd", schema), ...paths]);
  for (const path of paths) {
    if (!output.includes(`${path} validates`)) failures.set(path, output.split("\n").filter((line) => line.startsWith(path)).join("\n") || output);
  }
  return failures;
}

/**
 * Everything wrong with each signed DTE (an empty list: nothing): the DTE schema (33, 61 alone),
 * its signature, the TED, and the DTE inside a signed envelope of its kind (schema and signature).
 */
export function documentsProblems(dtes: string[]): string[][] {
  envelopeSigner ??= openPkcs12(certificate(), CERT_PASSWORD, new Date("2026-01-15T12:00:00Z"));
  const signer = envelopeSigner;
  const documents = dtes.map((dte) => {
    const docType = Number(/<TipoDTE>(\d+)<\/TipoDTE>/.exec(dte)?.[1]);
    const issuerRut = /<RUTEmisor>([^<]+)<\/RUTEmisor>/.exec(dte)![1]!;
    const envelope = buildEnvelope({ docType, issuerRut, senderRut: signer.holderRut, resolution: { number: 0, date: "2026-01-05" }, signedAt: "2026-01-15T09:00:00", documents: [dte] }, signer);
    return { dte, docType, path: file(dte), envelope, envelopePath: file(envelope, "envelope.xml") };
  });
  const dteFailures = schemaFailures(documents.filter((d) => d.docType !== 39).map((d) => d.path), "DTE_v10.xsd");
  const envioDte = schemaFailures(documents.filter((d) => d.docType !== 39).map((d) => d.envelopePath), "EnvioDTE_v10.xsd");
  const envioBoleta = schemaFailures(documents.filter((d) => d.docType === 39).map((d) => d.envelopePath), "EnvioBOLETA_v11.xsd");
  return documents.map(({ dte, path, envelopePath }) => {
    const problems: string[] = [];
    if (dteFailures.has(path)) problems.push(`DTE_v10.xsd: ${dteFailures.get(path)}`);
    const envelopeFailure = envioDte.get(envelopePath) ?? envioBoleta.get(envelopePath);
    if (envelopeFailure) problems.push(`envelope schema: ${envelopeFailure}`);
    const signature = run(["xmlsec1", "--verify", "--id-attr:ID", "Documento", path]);
    if (!signature.ok) problems.push(`xmlsec1 (Documento): ${signature.output}`);
    const envelopeSignature = run(["xmlsec1", "--verify", "--id-attr:ID", "SetDTE", "--node-xpath", "/*/*[local-name()='Signature']", envelopePath]);
    if (!envelopeSignature.ok) problems.push(`xmlsec1 (SetDTE): ${envelopeSignature.output}`);
    problems.push(...tedProblems(dte));
    return problems;
  });
}

/** documentsProblems of one DTE. */
export const documentProblems = (dte: string) => documentsProblems([dte])[0]!;

/**
 * After each test, every signed document in the test's database that was not checked yet passes
 * documentsProblems. Call once per test file that issues documents.
 */
export function useSiiChecks(getApp: () => TestApp) {
  const checked = new Set<string>();
  // Tens of megabytes of documents, page images and envelopes a file: not left behind.
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
    work = undefined;
  });
  afterEach(async () => {
    if (!siiArtefactsAvailable) return;
    const rows = await getApp().database.query<{ id: string; doc_type: number; folio: number; signed_xml: string }>("select id, doc_type, folio, signed_xml from tax_documents where signed_xml is not null");
    const fresh = rows.filter((row) => !checked.has(row.id));
    for (const row of fresh) checked.add(row.id);
    const problems = documentsProblems(fresh.map((row) => row.signed_xml));
    expect(Object.fromEntries(fresh.map((row, index) => [`${row.doc_type} N° ${row.folio}`, problems[index]]).filter(([, found]) => found!.length))).toEqual({});
  }, 120_000);
}

/** The PDF417 of a printed copy, read from its page rendered by pdftoppm (400 dpi): the TED's bytes as ISO-8859-1 text. */
export function barcodeOf(pdfPath: string): string {
  const image = run(["pdftoppm", "-r", "400", "-gray", "-singlefile", pdfPath, pdfPath]);
  if (!image.ok) throw new Error(`pdftoppm: ${image.output}`);
  const decoded = run([existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3", "-c", DECODE, `${pdfPath}.pgm`]);
  if (!decoded.ok) throw new Error(`zxing-cpp: ${decoded.output}`);
  return Buffer.from(decoded.output.trim(), "hex").toString("latin1");
}

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
