import { createPrivateKey, createPublicKey, createVerify, type KeyObject } from "node:crypto";
import type { SiiEnvironment } from "../../../db/schema";
import { AppError } from "../../../lib/errors";
import { normalizeRut } from "../../../lib/rut";
import { addDays } from "../../../lib/time";
import type { CafTrust } from "./trust";
import { elementOf, latin1, textOf, withoutWhitespaceBetweenTags } from "./xml";

/** Facturas' and notas de crédito's folios must be used within this many days of the authorization; boletas' do not expire. */
export const CAF_VALID_DAYS = 180;

export interface ParsedCaf {
  issuerRut: string;
  docType: number;
  rangeFrom: number;
  rangeTo: number;
  authorizedOn: string;
  expiresOn: string | null;
  environment: SiiEnvironment;
  /** The `<CAF>` element in the SII's canonical form, as every TED carries it. */
  cafXml: string;
  privateKeyPem: string;
}

const refuse = (reason: string, message: string): never => {
  throw new AppError("VALIDATION_FAILED", message, { reason, fields: [{ path: "body.xml", message }] });
};

/** The RSA public key of a CAF's `RSAPK` (modulus and exponent in base64). */
export function cafPublicKey(cafXml: string): KeyObject {
  const modulus = textOf(cafXml, "M");
  const exponent = textOf(cafXml, "E");
  if (!modulus || !exponent) throw new Error("CAF without RSAPK");
  return createPublicKey({ key: { kty: "RSA", n: Buffer.from(modulus, "base64").toString("base64url"), e: Buffer.from(exponent, "base64").toString("base64url") }, format: "jwk" });
}

/** Whether a `<CAF>`'s FRMA is the given key's SHA1withRSA signature of its `<DA>` in the SII's canonical form. */
export function cafSignedBy(cafXml: string, key: KeyObject): boolean {
  const da = elementOf(cafXml, "DA");
  const frma = textOf(cafXml, "FRMA");
  if (!da || !frma) return false;
  return createVerify("RSA-SHA1").update(latin1(withoutWhitespaceBetweenTags(da))).verify(key, Buffer.from(frma.replace(/\s/g, ""), "base64"));
}

/**
 * Reads and checks a CAF file (`<AUTORIZACION>` with the `<CAF>`, its private key `RSASK`):
 * the SII's signature for its IDK (or a trusted test key), its RUT, type, range, key pair and
 * expiry. A refusal is a 422 whose `details.reason` names the check.
 */
export function parseCaf(xml: string, trust: CafTrust, clinicRut: string | null, today: string): ParsedCaf {
  const caf = elementOf(xml, "CAF");
  const da = caf && elementOf(caf, "DA");
  const keyPem = textOf(xml, "RSASK");
  if (!xml.includes("<AUTORIZACION") || !caf || !da || !keyPem) refuse("not_a_caf", "Not a CAF file: expected <AUTORIZACION> with <CAF>, <DA>, <FRMA> and <RSASK>");
  const docType = Number(textOf(da!, "TD"));
  const rangeFrom = Number(textOf(da!, "D"));
  const rangeTo = Number(textOf(da!, "H"));
  const authorizedOn = textOf(da!, "FA") ?? "";
  const idk = textOf(da!, "IDK") ?? "";
  const rut = normalizeRut(textOf(da!, "RE") ?? "");
  if (!Number.isInteger(rangeFrom) || !Number.isInteger(rangeTo) || rangeFrom < 1 || rangeTo < rangeFrom || !/^\d{4}-\d{2}-\d{2}$/.test(authorizedOn) || !rut) {
    refuse("not_a_caf", "Not a CAF file: its RE, RNG or FA cannot be read");
  }
  if (/[^\x00-\xff]/.test(caf!)) refuse("not_a_caf", "Not a CAF file: it holds characters outside ISO-8859-1");
  const cafXml = withoutWhitespaceBetweenTags(caf!);
  let environment: SiiEnvironment | null = null;
  const sii = trust.sii.get(idk);
  if (sii && cafSignedBy(cafXml, sii.key)) environment = sii.environment;
  else if (trust.test.some((key) => cafSignedBy(cafXml, key))) environment = "test";
  if (!environment) refuse("signature", `The CAF's signature (FRMA) does not verify with the SII's key for IDK ${idk || "(none)"}`);
  if (!clinicRut) refuse("clinic_rut_missing", "Set the clinic's RUT before uploading a CAF");
  if (rut !== clinicRut) refuse("rut_mismatch", `The CAF is for RUT ${rut}, not the clinic's ${clinicRut}`);
  if (![33, 39, 61].includes(docType)) refuse("doc_type", `The CAF is for document type ${textOf(da!, "TD")}; only 33, 39 and 61 are issued`);
  let privateKeyPem: string;
  try {
    const privateKey = createPrivateKey(keyPem!.trim());
    const derived = createPublicKey(privateKey).export({ format: "jwk" });
    const stated = cafPublicKey(cafXml).export({ format: "jwk" });
    if (derived.n !== stated.n || derived.e !== stated.e) refuse("key_mismatch", "The CAF's private key (RSASK) does not match its public key (RSAPK)");
    privateKeyPem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  } catch (error) {
    if (error instanceof AppError) throw error;
    return refuse("key_unreadable", "The CAF's private key (RSASK) cannot be read");
  }
  const expiresOn = docType === 39 ? null : addDays(authorizedOn, CAF_VALID_DAYS);
  if (expiresOn && expiresOn < today) refuse("expired", `The CAF expired on ${expiresOn} (${CAF_VALID_DAYS} days from its authorization on ${authorizedOn})`);
  return { issuerRut: rut!, docType, rangeFrom, rangeTo, authorizedOn, expiresOn, environment: environment!, cafXml, privateKeyPem };
}
