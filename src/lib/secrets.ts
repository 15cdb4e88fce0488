import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

/**
 * Secrets the service must read back (webhook signing secrets) are kept encrypted with
 * AES-256-GCM under a key that is not in the database: derived from the JWT secret, so a copy
 * of the database (or a backup) alone does not reveal them.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(rootSecret: string, purpose: string) {
    this.key = createHmac("sha256", rootSecret).update(`secret-box:${purpose}`).digest();
  }

  /** `v1.<iv>.<ciphertext and tag>`, base64url. */
  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `v1.${iv.toString("base64url")}.${sealed.toString("base64url")}`;
  }

  open(sealed: string): string {
    const [version, iv, body] = sealed.split(".");
    if (version !== "v1" || !iv || !body) throw new Error("A sealed secret has an unknown form");
    const data = Buffer.from(body, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString("utf8");
  }
}
