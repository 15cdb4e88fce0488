import { createPublicKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { SiiEnvironment } from "../../../db/schema";

/**
 * The SII's public keys for CAF signatures (FRMA), by IDK. Bun's TLS library refuses to parse the
 * SII's 512-bit certificates, so the keys were taken out once with `openssl x509 -pubkey`:
 * 100 from the SII's certificate 100.cer (certification, "Servicio de Impuestos Internos",
 * valid 2003-04-29 to 2004-04-23), 300 from 300.cer (production, same subject); both as published
 * with LibreDTE (resources/certificates/). The SII still signs CAFs with them after the dates.
 */
const SII_CAF_KEYS: Record<string, { environment: SiiEnvironment; pem: string }> = {
  "100": {
    environment: "certification",
    pem: `-----BEGIN PUBLIC KEY-----
MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAMj78A3LIaVQAKWFUixd5SinPgzhbMA6
seXqfeSyooER41L6743LfVHjSavUsQXc1PZ8+eExFQWMnwFUKRuMcVMCAwEAAQ==
-----END PUBLIC KEY-----`,
  },
  "300": {
    environment: "production",
    pem: `-----BEGIN PUBLIC KEY-----
MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAJ3uv8XuvZbfTHz1Pxv6Fdhdc+8ExnGP
jAez94Xv7nXntO9aOuB5wyZakA5F9gKJCvb7T6+iuNaTj38BHDWFszUCAwEAAQ==
-----END PUBLIC KEY-----`,
  },
};

/** Which keys a CAF's FRMA may verify with: the SII's, and the test keys SII_TEST_CAF_KEYS names. */
export interface CafTrust {
  sii: Map<string, { environment: SiiEnvironment; key: KeyObject }>;
  test: KeyObject[];
}

export function cafTrust(testKeysFile: string | null): CafTrust {
  const sii = new Map(Object.entries(SII_CAF_KEYS).map(([idk, { environment, pem }]) => [idk, { environment, key: createPublicKey(pem) }]));
  const test = testKeysFile ? publicKeysIn(readFileSync(testKeysFile, "utf8")) : [];
  return { sii, test };
}

/** Every PEM public key (or certificate's key) in a text. */
export function publicKeysIn(text: string): KeyObject[] {
  const blocks = text.match(/-----BEGIN (?:PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE)-----[\s\S]+?-----END (?:PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE)-----/g) ?? [];
  return blocks.map((pem) => createPublicKey(pem));
}
