import { createHmac, randomBytes } from "node:crypto";

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's bytes, as the specification signs. */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`;
}

/** The three headers; during a rotation's overlap the old secret signs too (space-separated signatures). */
export function webhookHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "vet-clinic-service-webhooks",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => signature(secret, id, timestampSeconds, body)).join(" "),
  };
}
