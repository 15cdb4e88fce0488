import { expect } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Config } from "../../src/config";
import { createTestAuthority } from "../../src/modules/billing/sii/test-authority";
import type { ClinicSession } from "../helpers/clinic";

/** One stand-in SII per test file: its key is what SII_TEST_CAF_KEYS trusts. */
export const authority = createTestAuthority();

export const CLINIC_RUT = "76.086.428-5";
export const CERT_PASSWORD = "clave-del-certificado";

let keysFile: string | undefined;

/** The PEM file of the stand-in SII's public key: every test app trusts it (tests/helpers/app.ts). */
export function testCafKeysFile(): string {
  if (keysFile) return keysFile;
  keysFile = join(mkdtempSync(join(tmpdir(), "sii-keys-")), "test-caf-keys.pem");
  writeFileSync(keysFile, authority.publicKeyPem);
  return keysFile;
}

/** The config a test app needs to trust the stand-in SII's CAFs (every test app has it by default). */
export const siiConfig = (): Partial<Config> => ({ siiTestCafKeysFile: testCafKeysFile() });

export const issuerSettings = {
  rut: CLINIC_RUT,
  legal_name: "Servicios Veterinarios Los Aromos SpA",
  giro: "Servicios veterinarios",
  economic_activity_code: "750000",
  address: "Av. Los Aromos 1234",
  commune: "Ñuñoa",
  sii_resolution_number: 0,
  sii_resolution_date: "2026-01-05",
};

/** A factura's receiver with every field the SII marks mandatory for type 33. */
export const facturaReceiver = {
  receiver_rut: "76.123.456-0",
  receiver_name: "Agrícola Los Andes SpA",
  receiver_giro: "Agricultura",
  receiver_address: "Camino Real 45",
  receiver_commune: "Peñalolén",
};

export const cafFor = (docType: number, from = 1, to = 1000, authorizedOn = "2026-01-10") => authority.caf({ rut: CLINIC_RUT, docType, from, to, authorizedOn });

export const certificate = (overrides: Partial<Parameters<typeof authority.pkcs12>[0]> = {}) =>
  authority.pkcs12({ holderRut: "12.345.678-5", password: CERT_PASSWORD, notBefore: new Date("2025-06-01T00:00:00Z"), notAfter: new Date("2027-06-01T00:00:00Z"), ...overrides });

let sharedCertificate: string | undefined;

/** Makes a clinic able to issue: its issuer data, a CAF per type and a certificate. */
export async function makeIssuer(session: ClinicSession, types: number[] = [33, 39, 61]) {
  const patched = await session.as("PATCH", "/api/v1/clinic", { json: issuerSettings });
  expect(patched.status, patched.text).toBe(200);
  const stored = await session.as<{ data: { doc_type: number }[] }>("GET", "/api/v1/billing/sii/cafs");
  for (const docType of types.filter((type) => !stored.body.data.some((caf) => caf.doc_type === type))) {
    const r = await session.as("POST", "/api/v1/billing/sii/cafs", { json: { xml: cafFor(docType) } });
    expect(r.status, r.text).toBe(201);
  }
  const cert = await session.as("PUT", "/api/v1/billing/sii/certificate", { json: { pkcs12: (sharedCertificate ??= certificate()), password: CERT_PASSWORD } });
  expect(cert.status, cert.text).toBe(200);
}
