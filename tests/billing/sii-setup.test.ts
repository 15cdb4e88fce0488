import { describe, expect, test } from "bun:test";
import { createSecretBox, SecretUnreadableError } from "../../src/lib/secrets";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import { createTestAuthority } from "../../src/modules/billing/sii/test-authority";
import type { Refusal, TestApp } from "../helpers/app";
import { flushDeferred, registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { emitted } from "./helpers";
import { useSiiChecks } from "./sii-checks";
import { authority, cafFor, certificate, CERT_PASSWORD, CLINIC_RUT, facturaReceiver, issuerSettings, makeIssuer } from "./sii-fixtures";

let t: TestApp;
let vet: ClinicSession;
useClinicApp((made) => ({ t, vet } = made), { members: ["vet"] });
useSiiChecks(() => t);

type CafView = { id: string; doc_type: number; range_from: number; range_to: number; next_folio: number; remaining: number; authorized_on: string; expires_on: string | null; environment: string; warnings: string[] };
const uploadCaf = (who: ClinicSession, xml: string) => who.as<CafView & Refusal<{ reason: string }>>("POST", "/api/v1/billing/sii/cafs", { json: { xml } });
const putCertificate = (who: ClinicSession, pkcs12: string, password = CERT_PASSWORD) => who.as<Record<string, string> & Refusal<{ reason: string; fields: { path: string }[] }>>("PUT", "/api/v1/billing/sii/certificate", { json: { pkcs12, password } });
const issue = (who: ClinicSession, json: Record<string, unknown>) => who.as<TaxDocumentView & Refusal<Record<string, unknown>>>("POST", "/api/v1/billing/sii/documents", { json });
const count = async (table: string) => (await t.database.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0]!.n;
const withIssuerData = async () => {
  const clinic = await registerClinic(t);
  expect((await clinic.as("PATCH", "/api/v1/clinic", { json: issuerSettings })).status).toBe(200);
  return clinic;
};

describe("CAFs", () => {
  test("each refusal is a 422 naming its reason, and stores nothing", async () => {
    const clinic = await withIssuerData();
    expect((await uploadCaf(clinic, cafFor(33, 1, 100))).status).toBe(201);
    const stranger = createTestAuthority();
    const before = await count("sii_cafs");
    const cases: [string, string][] = [
      ["<AUTORIZACION>nothing</AUTORIZACION>", "not_a_caf"],
      [stranger.caf({ rut: CLINIC_RUT, docType: 39, from: 1, to: 10, authorizedOn: "2026-01-10" }), "signature"],
      [cafFor(33, 1, 100).replace("<IDK>100</IDK>", "<IDK>300</IDK>"), "signature"],
      [authority.caf({ rut: "12.345.678-5", docType: 39, from: 1, to: 10, authorizedOn: "2026-01-10" }), "rut_mismatch"],
      [authority.caf({ rut: CLINIC_RUT, docType: 34, from: 1, to: 10, authorizedOn: "2026-01-10" }), "doc_type"],
      [cafFor(33, 50, 150), "overlap"],
      [cafFor(33, 200, 300, "2025-07-01"), "expired"],
      [cafFor(39).replace(/<RSASK>[\s\S]*<\/RSASK>/, "<RSASK>-----BEGIN RSA PRIVATE KEY-----\nbroken\n-----END RSA PRIVATE KEY-----</RSASK>"), "key_unreadable"],
      [cafFor(39).replace(/<RSASK>[\s\S]*<\/RSASK>/, cafFor(39).match(/<RSASK>[\s\S]*<\/RSASK>/)![0]), "key_mismatch"],
    ];
    for (const [xml, reason] of cases) {
      const r = await uploadCaf(clinic, xml);
      expect(r.status, `${reason}: ${r.text}`).toBe(422);
      expect(r.body.details.reason, r.text).toBe(reason);
    }
    expect(await count("sii_cafs")).toBe(before);
    // Boletas' folios do not expire; a clinic without a RUT cannot take a CAF.
    expect((await uploadCaf(clinic, cafFor(39, 1, 10, "2024-01-01"))).status).toBe(201);
    const bare = await registerClinic(t);
    expect((await uploadCaf(bare, cafFor(39))).body.details.reason).toBe("clinic_rut_missing");
    expect((await uploadCaf(vet, cafFor(39))).status).toBe(403);
  });

  test("the list shows ranges, what remains and warnings, never the key", async () => {
    const clinic = await withIssuerData();
    expect((await uploadCaf(clinic, cafFor(33, 1, 100, "2025-07-25"))).status).toBe(201);
    expect((await uploadCaf(clinic, cafFor(39, 1, 5))).status).toBe(201);
    const list = await clinic.as<{ data: CafView[] }>("GET", "/api/v1/billing/sii/cafs");
    expect(list.status).toBe(200);
    expect(list.text).not.toContain("PRIVATE KEY");
    expect(list.text).not.toContain("private_key");
    const [factura, boleta] = list.body.data;
    expect(factura).toMatchObject({ doc_type: 33, range_from: 1, range_to: 100, next_folio: 1, remaining: 100, authorized_on: "2025-07-25", expires_on: "2026-01-21", environment: "test" });
    expect(factura!.warnings).toEqual(["expires on 2026-01-21"]);
    expect(boleta).toMatchObject({ doc_type: 39, expires_on: null, remaining: 5, warnings: [] });
  });
});

describe("certificate", () => {
  test("stored from a PKCS#12 (legacy 3DES and AES), the holder's RUT from serialNumber or subjectAltName, shown without its key", async () => {
    const clinic = await withIssuerData();
    expect((await clinic.as("GET", "/api/v1/billing/sii/certificate")).status).toBe(404);
    const legacy = await putCertificate(clinic, certificate());
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.body.holder_rut).toBe("12.345.678-5");
    expect([legacy.body.valid_from, legacy.body.valid_to].map((d) => d!.slice(0, 10))).toEqual(["2025-06-01", "2027-06-01"]);
    expect(legacy.body.subject).toContain("CN=Firmante de Prueba");
    expect(legacy.body.issuer).toContain("CN=Autoridad de Prueba");
    const modern = await putCertificate(clinic, certificate({ legacy: false, rutIn: "subjectAltName", holderRut: "7.880.442-4" }));
    expect(modern.status, modern.text).toBe(200);
    expect(modern.body.holder_rut).toBe("7.880.442-4");
    const shown = await clinic.as("GET", "/api/v1/billing/sii/certificate");
    expect(shown.text).not.toContain("PRIVATE");
    expect(shown.text).not.toContain("pkcs12");
  });

  test("a wrong password, a broken file, an expired certificate or one without a RUT is a 422 that says so", async () => {
    const clinic = await withIssuerData();
    const good = certificate();
    const wrong = await putCertificate(clinic, good, "not the password");
    expect(wrong.status).toBe(422);
    expect(wrong.body.details.reason).toBe("wrong_password");
    expect(wrong.body.details.fields[0]!.path).toBe("body.password");
    for (const [pkcs12, reason] of [
      [Buffer.from("not a pfx at all").toString("base64"), "unreadable"],
      [good.slice(0, good.length / 2), "unreadable"],
      [certificate({ notBefore: new Date("2024-01-01T00:00:00Z"), notAfter: new Date("2025-01-01T00:00:00Z") }), "expired"],
      [certificate({ rutIn: "subjectAltName", holderRut: "not a rut" }), "no_rut"],
    ] as const) {
      const r = await putCertificate(clinic, pkcs12);
      expect(r.status, `${reason}: ${r.text}`).toBe(422);
      expect(r.body.details.reason).toBe(reason);
    }
    expect((await clinic.as("GET", "/api/v1/billing/sii/certificate")).status).toBe(404);
    expect((await putCertificate(vet, good)).status).toBe(403);
  });
});

describe("issuing needs", () => {
  test("the issuer's data and a certificate (409 saying which), and text ISO-8859-1 can hold (422 naming the field)", async () => {
    const clinic = await registerClinic(t);
    const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    const missing = await issue(clinic, { doc_type: 39, invoice_id: invoice.id });
    expect(missing.status).toBe(409);
    expect(missing.body.details).toMatchObject({ reason: "issuer_data_missing", missing: ["rut", "legal_name", "giro", "economic_activity_code"] });
    expect((await clinic.as("PATCH", "/api/v1/clinic", { json: issuerSettings })).status).toBe(200);
    expect((await uploadCaf(clinic, cafFor(39))).status).toBe(201);
    const noCertificate = await issue(clinic, { doc_type: 39, invoice_id: invoice.id });
    expect(noCertificate.status).toBe(409);
    expect(noCertificate.body.details).toMatchObject({ reason: "certificate_missing" });
    expect((await putCertificate(clinic, certificate())).status).toBe(200);
    expect((await uploadCaf(clinic, cafFor(33))).status).toBe(201);
    const before = await count("tax_documents");
    const emoji = await issue(clinic, { doc_type: 33, invoice_id: invoice.id, ...facturaReceiver, receiver_name: "Granja 🐄 Feliz" });
    expect(emoji.status).toBe(422);
    expect(emoji.text).toContain("body.receiver_name");
    const item = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    await t.database.query(`update invoice_items set description = 'Consulta “urgente”' where invoice_id = '${item.id}'`);
    const quotes = await issue(clinic, { doc_type: 39, invoice_id: item.id });
    expect(quotes.status).toBe(422);
    expect(quotes.text).toContain("invoice.items[0].description");
    expect(await count("tax_documents")).toBe(before);
    const ok = await issue(clinic, { doc_type: 39, invoice_id: invoice.id });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body).toMatchObject({ folio: 1, environment: "test", signed: true, sent_at: null, track_id: null, sii_status: null });
  });
});

describe("secrets at rest", () => {
  test("the CAF and certificate keys are stored encrypted under SECRETS_KEY, and appear in no log line", async () => {
    const clinic = await registerClinic(t);
    await makeIssuer(clinic, [39]);
    const [caf] = await t.database.query<{ private_key_encrypted: string; caf_xml: string }>("select private_key_encrypted, caf_xml from sii_cafs order by created_at desc limit 1");
    const [cert] = await t.database.query<{ private_key_encrypted: string }>("select private_key_encrypted from sii_certificates order by updated_at desc limit 1");
    for (const sealed of [caf!.private_key_encrypted, cert!.private_key_encrypted]) {
      expect(sealed).not.toContain("PRIVATE KEY");
      expect(sealed.startsWith("v1.")).toBe(true);
      expect(createSecretBox("test-secrets-key-that-is-at-least-32-bytes").open(sealed)).toMatch(/-----BEGIN (RSA )?PRIVATE KEY-----/);
      expect(() => createSecretBox("another-secrets-key-of-at-least-32-bytes").open(sealed)).toThrow(SecretUnreadableError);
    }
    expect(caf!.caf_xml).not.toContain("RSASK");
    const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await issue(clinic, { doc_type: 39, invoice_id: invoice.id })).status).toBe(201);
    await flushDeferred(); // the request lines too, written after each response
    const logs = t.logLines.join("\n");
    for (const secret of ["PRIVATE KEY", CERT_PASSWORD, "RSASK", caf!.private_key_encrypted.slice(3, 30)]) expect(logs).not.toContain(secret);
  });
});

describe("folios", () => {
  test("come from the lowest usable range; none left or only expired ones is 409 NO_FOLIOS naming the type", async () => {
    const clinic = await registerClinic(t);
    await makeIssuer(clinic, []);
    let who = clinic;
    const invoice = async () => (await emitted(who, [{ quantity: 1, unit_price: 1_000 }])).id;
    const none = await issue(clinic, { doc_type: 39, invoice_id: await invoice() });
    expect(none.status, none.text).toBe(409);
    expect(none.body.code).toBe("NO_FOLIOS");
    expect(none.body.message).toContain("39");
    expect(none.body.details).toMatchObject({ doc_type: 39 });
    expect((await uploadCaf(clinic, cafFor(39, 11, 20))).status).toBe(201);
    expect((await uploadCaf(clinic, cafFor(39, 1, 2))).status).toBe(201);
    const folios = [];
    for (let i = 0; i < 4; i++) folios.push((await issue(clinic, { doc_type: 39, invoice_id: await invoice() })).body.folio);
    expect(folios).toEqual([1, 2, 11, 12]);
    // A factura range that has expired is skipped, and with nothing else it is NO_FOLIOS.
    expect((await uploadCaf(clinic, cafFor(33, 1, 10, "2025-07-20"))).status).toBe(201);
    const factura = { doc_type: 33, ...facturaReceiver };
    expect((await issue(clinic, { ...factura, invoice_id: await invoice() })).body.folio).toBe(1);
    t.clock.advance(5 * 86_400_000);
    who = await relogin(t, clinic);
    const expired = await issue(who, { ...factura, invoice_id: await invoice() });
    expect(expired.status, expired.text).toBe(409);
    expect(expired.body.code).toBe("NO_FOLIOS");
    expect(expired.body.message).toContain("used up or expired");
  });
});
