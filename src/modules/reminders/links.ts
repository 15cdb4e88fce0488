import { hmacSha256, safeEqual } from "../../lib/crypto";

/** What a tutor's link does: stop messages on the channel, confirm or cancel the visit. */
export type LinkAction = "unsubscribe" | "confirm" | "cancel";
const ACTIONS: LinkAction[] = ["unsubscribe", "confirm", "cancel"];

/**
 * Links in a reminder, signed so that no login is needed and nobody can forge one for another
 * message: `<action>.<message id>.<HMAC>`, with a key derived from the JWT secret.
 */
export class ReminderLinks {
  private readonly key: string;

  constructor(
    jwtSecret: string,
    private readonly baseUrl: () => string,
  ) {
    this.key = hmacSha256(jwtSecret, "reminder-links");
  }

  token(action: LinkAction, messageId: string): string {
    return `${action}.${messageId}.${hmacSha256(this.key, `${action}.${messageId}`)}`;
  }

  url(action: LinkAction, messageId: string): string {
    return `${this.baseUrl()}/api/v1/public/reminders/${action}?token=${this.token(action, messageId)}`;
  }

  /** The message id a token names for `action`, or null when it is not one of ours. */
  verify(action: LinkAction, token: string): string | null {
    const [given, messageId, mac] = token.split(".");
    if (given !== action || !ACTIONS.includes(given) || !messageId || !mac || !/^[0-9a-f-]{36}$/.test(messageId)) return null;
    return safeEqual(mac, hmacSha256(this.key, `${action}.${messageId}`)) ? messageId : null;
  }
}
