import { timingSafeEqual } from "node:crypto";

/** SHA-256 hex of a secret value (refresh tokens, API keys): only digests are stored. */
export function sha256Hex(value: string): string {
  return new Bun.CryptoHasher("sha256").update(value).digest("hex");
}

export function hmacSha256(key: string, value: string): string {
  return new Bun.CryptoHasher("sha256", key).update(value).digest("base64url");
}

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Uniform random [A-Za-z0-9] string from the CSPRNG (rejection sampling, no modulo bias). */
export function randomAlphanumeric(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

/** Constant-time string comparison for equal-length secrets. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export const newId = (): string => Bun.randomUUIDv7();
