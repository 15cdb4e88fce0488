import type { Clock } from "../../lib/clock";
import { HOUR } from "../../lib/clock";
import { randomToken, safeEqual } from "../../lib/crypto";

/** How long the first-run link works after the server printed it. */
export const SETUP_LINK_TTL_MS = HOUR;

/**
 * The first run's one-time setup token: issued at start while the install has no user (a new
 * one each start), valid an hour, used once. Kept in this process only: it is printed to the
 * operator, who opens `/setup#<token>` on this server.
 */
export class SetupLink {
  private token: string | undefined;
  private expiresAt = 0;

  constructor(private readonly clock: Clock) {}

  issue(): string {
    this.token = randomToken(32);
    this.expiresAt = this.clock.now().getTime() + SETUP_LINK_TTL_MS;
    return this.token;
  }

  /**
   * Takes the token if it is the live one: from then on it opens nothing. `release` gives it back
   * when what it was taken for failed (a refused field), so the operator can correct and retry.
   */
  take(presented: string): { release(): void } | null {
    const token = this.token;
    if (!token || this.clock.now().getTime() >= this.expiresAt || !safeEqual(presented, token)) return null;
    this.token = undefined;
    return { release: () => void (this.token ??= token) };
  }
}
