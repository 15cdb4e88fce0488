import { createPublicKey } from "node:crypto";
import type { SignedXml as SignedXmlClass } from "xml-crypto";

/** xml-crypto is loaded at the first signature: an idle server need not hold it. */
const loadSignedXml = (): typeof SignedXmlClass => (require("xml-crypto") as typeof import("xml-crypto")).SignedXml;

/** The signer: the clinic's certificate and its private key (PEM). */
export interface Signer {
  certificatePem: string;
  privateKeyPem: string;
}

const C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315";

/** `KeyInfo` as the SII's signature schema has it: the RSA `KeyValue`, then the certificate. */
function keyInfoOf(signer: Signer): string {
  const jwk = createPublicKey(signer.certificatePem).export({ format: "jwk" });
  const modulus = Buffer.from(jwk.n!, "base64url").toString("base64");
  const exponent = Buffer.from(jwk.e!, "base64url").toString("base64");
  const certificate = signer.certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, "");
  return `<KeyValue><RSAKeyValue><Modulus>${modulus}</Modulus><Exponent>${exponent}</Exponent></RSAKeyValue></KeyValue><X509Data><X509Certificate>${certificate}</X509Certificate></X509Data>`;
}

/**
 * Signs the root's first child, whose `ID` is `id` (the Documento of a DTE, the SetDTE of an
 * envelope), and appends the `Signature` to the root, as the
 * SII's restricted signature schema requires: inclusive C14N 20010315 (as the transform too),
 * rsa-sha1, sha1 digest, one Reference.
 */
export function signEnveloped(xml: string, id: string, signer: Signer): string {
  if (!xml.includes(` ID="${id}"`)) throw new Error(`signEnveloped: no element with ID ${id}`);
  const SignedXml = loadSignedXml();
  const signature = new SignedXml({
    privateKey: signer.privateKeyPem,
    idAttribute: "ID",
    canonicalizationAlgorithm: C14N,
    signatureAlgorithm: "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
    getKeyInfoContent: () => keyInfoOf(signer),
  });
  // Addressed by position rather than by searching every element for the ID: a third less time.
  signature.addReference({ xpath: "/*/*[1]", transforms: [C14N], digestAlgorithm: "http://www.w3.org/2000/09/xmldsig#sha1" });
  signature.computeSignature(xml, { location: { reference: "/*", action: "append" } });
  return keepTimbres(xml, signature.getSignedXml());
}

const TED = /<TED version="1.0">[\s\S]*?<\/TED>/g;

/**
 * The signer writes the document out again, and with it each TED's `'` and `"` as plain characters;
 * the TED must stay byte for byte as stamped (its DD in the SII's canonical form, as its barcode
 * carries it). Canonical XML reads `&apos;` and `'` alike, so putting the stamped TEDs back leaves
 * the signature valid.
 */
function keepTimbres(unsigned: string, signed: string): string {
  const stamped = unsigned.match(TED);
  if (!stamped) return signed;
  let index = 0;
  return signed.replace(TED, (written) => stamped[index++] ?? written);
}
