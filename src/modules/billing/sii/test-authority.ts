import { createSign, generateKeyPairSync, type KeyObject } from "node:crypto";
import forge from "node-forge";
import { withoutWhitespaceBetweenTags } from "./xml";

/**
 * A stand-in for the SII in tests, benchmarks and the demo (as LibreDTE's test fakes are): its own
 * key signs CAFs the way the SII does, and it makes PKCS#12 certificates carrying a holder's RUT.
 * Its public key goes in the PEM file SII_TEST_CAF_KEYS names; documents under its CAFs are
 * `environment: "test"` and print SIN VALOR LEGAL.
 */
export interface TestAuthority {
  publicKeyPem: string;
  caf(options: { rut: string; legalName?: string; docType: number; from: number; to: number; authorizedOn: string; idk?: number }): string;
  pkcs12(options: { holderRut: string; name?: string; password: string; notBefore: Date; notAfter: Date; rutIn?: "serialNumber" | "subjectAltName"; legacy?: boolean }): string;
}

export function createTestAuthority(): TestAuthority {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
  return {
    publicKeyPem: publicKey.export({ format: "pem", type: "spki" }).toString(),
    caf: (options) => signedCaf(privateKey, options),
    pkcs12: testPkcs12,
  };
}

const b64 = (base64url: string) => Buffer.from(base64url, "base64url").toString("base64");

function signedCaf(authorityKey: KeyObject, options: Parameters<TestAuthority["caf"]>[0]): string {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 1024 });
  const jwk = publicKey.export({ format: "jwk" });
  const da = withoutWhitespaceBetweenTags(`<DA><RE>${options.rut.replace(/\./g, "")}</RE><RS>${(options.legalName ?? "CLINICA DE PRUEBA").slice(0, 40)}</RS><TD>${options.docType}</TD><RNG><D>${options.from}</D><H>${options.to}</H></RNG><FA>${options.authorizedOn}</FA><RSAPK><M>${b64(jwk.n!)}</M><E>${b64(jwk.e!)}</E></RSAPK><IDK>${options.idk ?? 100}</IDK></DA>`);
  const frma = createSign("RSA-SHA1").update(Buffer.from(da, "latin1")).sign(authorityKey, "base64");
  const keyPem = privateKey.export({ format: "pem", type: "pkcs1" }).toString();
  const pubPem = publicKey.export({ format: "pem", type: "spki" }).toString();
  // Laid out as the SII's files are (whitespace between tags), so parsing must canonicalize.
  return `<?xml version="1.0"?>\n<AUTORIZACION>\n<CAF version="1.0">\n${da.replace(/></g, ">\n<")}\n<FRMA algoritmo="SHA1withRSA">${frma}</FRMA>\n</CAF>\n<RSASK>${keyPem}</RSASK>\n<RSAPUBK>${pubPem}</RSAPUBK>\n</AUTORIZACION>\n`;
}

function testPkcs12(options: Parameters<TestAuthority["pkcs12"]>[0]): string {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ format: "pem", type: "pkcs1" }).toString()) as forge.pki.rsa.PrivateKey;
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  certificate.serialNumber = "0" + Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
  certificate.validity.notBefore = options.notBefore;
  certificate.validity.notAfter = options.notAfter;
  const subject: forge.pki.CertificateField[] = [{ shortName: "C", value: "CL" }, { shortName: "CN", value: options.name ?? "Firmante de Prueba" }];
  if ((options.rutIn ?? "serialNumber") === "serialNumber") subject.push({ type: "2.5.4.5", value: options.holderRut.replace(/\./g, "") });
  certificate.setSubject(subject);
  certificate.setIssuer([{ shortName: "C", value: "CL" }, { shortName: "CN", value: "Autoridad de Prueba" }]);
  if (options.rutIn === "subjectAltName") {
    // The holder's RUT as Chilean certification authorities write it: otherName 1.3.6.1.4.1.8321.1, an IA5String in [0].
    const { asn1 } = forge;
    const otherName = asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer("1.3.6.1.4.1.8321.1").getBytes()),
      asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.IA5STRING, false, options.holderRut.replace(/\./g, ""))]),
    ]);
    certificate.setExtensions([{ id: "2.5.29.17", name: "subjectAltName", value: asn1.toDer(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [otherName])).getBytes() }]);
  }
  certificate.sign(key, forge.md.sha256.create());
  const p12 = forge.pkcs12.toPkcs12Asn1(key, [certificate], options.password, { algorithm: options.legacy === false ? "aes256" : "3des" });
  return Buffer.from(forge.asn1.toDer(p12).getBytes(), "binary").toString("base64");
}
