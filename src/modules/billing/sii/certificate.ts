import type forge from "node-forge";

/** node-forge is loaded when a certificate is first read: an idle server need not hold it. */
const loadForge = (): typeof forge => require("node-forge");
import { AppError } from "../../../lib/errors";
import { normalizeRut } from "../../../lib/rut";

export interface OpenedCertificate {
  subject: string;
  holderRut: string;
  issuer: string;
  validFrom: Date;
  validTo: Date;
  certificatePem: string;
  privateKeyPem: string;
}

const refuse = (reason: string, message: string, path = "body.pkcs12"): never => {
  throw new AppError("VALIDATION_FAILED", message, { reason, fields: [{ path, message }] });
};

const distinguishedName = (attributes: forge.pki.CertificateField[]) => attributes.map((a) => `${a.shortName ?? a.name ?? a.type}=${a.value}`).join(", ");

/** The SII's OID for the holder's RUT in a Chilean certificate's subjectAltName (otherName). */
const RUT_OTHER_NAME_OID = "1.3.6.1.4.1.8321.1";

/**
 * The holder's RUT: Chilean certificates carry it as the subject's serialNumber or as an
 * otherName (OID 1.3.6.1.4.1.8321.1) of the subjectAltName; the first that reads as a RUT wins.
 */
function holderRutOf(certificate: forge.pki.Certificate): string | null {
  const lib = loadForge();
  const serialNumber = certificate.subject.getField({ type: "2.5.4.5" })?.value as string | undefined;
  const fromSubject = serialNumber ? normalizeRut(serialNumber.replace(/^[A-Z]+\s*/i, "")) : null;
  if (fromSubject) return fromSubject;
  const altNames = certificate.extensions.find((e) => e.name === "subjectAltName");
  if (!altNames?.value) return null;
  const candidates: string[] = [];
  const walk = (node: forge.asn1.Asn1, underRutOid: boolean) => {
    if (!Array.isArray(node.value)) {
      if (underRutOid && typeof node.value === "string") candidates.push(node.value);
      return;
    }
    let seenOid = underRutOid;
    for (const child of node.value) {
      if (child.type === lib.asn1.Type.OID && lib.asn1.derToOid(child.value as string) === RUT_OTHER_NAME_OID) seenOid = true;
      else walk(child, seenOid);
    }
  };
  walk(lib.asn1.fromDer(altNames.value as string), false);
  for (const candidate of candidates) {
    const rut = normalizeRut(candidate);
    if (rut) return rut;
  }
  return null;
}

/**
 * Opens a PKCS#12 (.pfx/.p12, legacy 3DES/RC2 encryption included) with its password and checks
 * it holds an RSA key with its certificate, valid today, whose holder's RUT can be read.
 */
export function openPkcs12(base64: string, password: string, now: Date): OpenedCertificate {
  const lib = loadForge();
  let asn1: forge.asn1.Asn1;
  try {
    const der = Buffer.from(base64, "base64");
    if (der.length === 0) throw new Error("empty");
    asn1 = lib.asn1.fromDer(der.toString("binary"));
  } catch {
    return refuse("unreadable", "Not a PKCS#12 file (.pfx/.p12) in base64");
  }
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = lib.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (/password|MAC|decrypt/i.test(message)) return refuse("wrong_password", "The password does not open this PKCS#12 file", "body.password");
    return refuse("unreadable", "The PKCS#12 file cannot be read");
  }
  const keyBags = [...(p12.getBags({ bagType: lib.pki.oids.pkcs8ShroudedKeyBag! })[lib.pki.oids.pkcs8ShroudedKeyBag!] ?? []), ...(p12.getBags({ bagType: lib.pki.oids.keyBag! })[lib.pki.oids.keyBag!] ?? [])];
  const certificates = (p12.getBags({ bagType: lib.pki.oids.certBag! })[lib.pki.oids.certBag!] ?? []).map((bag) => bag.cert).filter((c): c is forge.pki.Certificate => !!c);
  const key = keyBags.map((bag) => bag.key).find((k) => k) as forge.pki.rsa.PrivateKey | undefined;
  if (!key) return refuse("no_key", "The PKCS#12 file holds no private key (or one that is not RSA)");
  if (!key.n || !key.e) return refuse("not_rsa", "The certificate's key is not RSA");
  const certificate = certificates.find((c) => {
    const publicKey = c.publicKey as forge.pki.rsa.PublicKey;
    return publicKey.n && publicKey.n.equals(key.n) && publicKey.e.equals(key.e);
  });
  if (!certificate) return refuse("no_certificate", "The PKCS#12 file holds no certificate for its private key");
  if (certificate.validity.notAfter < now) return refuse("expired", `The certificate expired on ${certificate.validity.notAfter.toISOString().slice(0, 10)}`);
  if (certificate.validity.notBefore > now) return refuse("not_yet_valid", `The certificate is valid only from ${certificate.validity.notBefore.toISOString().slice(0, 10)}`);
  const holderRut = holderRutOf(certificate);
  if (!holderRut) return refuse("no_rut", "The certificate carries no holder's RUT (subject serialNumber or subjectAltName 1.3.6.1.4.1.8321.1)");
  return {
    subject: distinguishedName(certificate.subject.attributes),
    holderRut,
    issuer: distinguishedName(certificate.issuer.attributes),
    validFrom: certificate.validity.notBefore,
    validTo: certificate.validity.notAfter,
    // forge writes CRLF line ends; stored text keeps plain newlines.
    certificatePem: lib.pki.certificateToPem(certificate).replace(/\r\n/g, "\n"),
    privateKeyPem: lib.pki.privateKeyToPem(key).replace(/\r\n/g, "\n"),
  };
}
