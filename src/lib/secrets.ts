import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from "node:crypto";

/**
 * Encrypts secrets kept in the database (CAF private keys, the certificate's key) with AES-256-GCM
 * under a key that lives outside the database: the SHA-256 of SECRETS_KEY. The sealed form is
 * `v1.<iv>.<tag>.<ciphertext>` (base64url), so a backup of the database carries only ciphertext and
 * a restore opens it again given the same SECRETS_KEY.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

export class SecretUnreadableError extends Error {
  constructor() {
    super("A stored secret cannot be decrypted with this SECRETS_KEY (was the database restored with another key?)");
    this.name = "SecretUnreadableError";
  }
}

const boxKeyOf = (secretsKey: string) => createHash("sha256").update("vet-clinic secrets v1\0").update(secretsKey).digest();

/**
 * What the database keeps to recognise its key: a MAC of a constant under the box's key. Equal
 * checks mean the same key; the check gives nothing of the key away.
 */
export function secretsKeyCheck(secretsKey: string): string {
  return "v1." + createHmac("sha256", boxKeyOf(secretsKey)).update("vet-clinic secrets key check").digest("base64url");
}

export function createSecretBox(secretsKey: string): SecretBox {
  const key = boxKeyOf(secretsKey);
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".");
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== "v1" || !iv || !tag || body === undefined) throw new SecretUnreadableError();
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretUnreadableError();
      }
    },
  };
}
