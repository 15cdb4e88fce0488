/**
 * Login throttling per (email, address), from the attacker's side: someone who knows an owner's
 * email and hammers it from their own address slows only themselves; the owner's sign-in from
 * their usual address keeps working throughout. Addresses come from X-Forwarded-For through a
 * trusted proxy (the test's own loopback listener), never from traffic to another machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_LIMITS } from "../../src/config";
import { RestRateLimits, TrustedProxies } from "../../src/http/rate-limit";
import { ManualClock } from "../../src/lib/clock";
import { createTestApp, type TestApp } from "../helpers/app";
import { PASSWORD, registerClinic } from "../helpers/clinic";

const ATTACKER = "203.0.113.66";
const OWNER_ADDRESS = "198.51.100.7";

let t: TestApp;
let base: string;
let email: string;
beforeAll(async () => {
  // The contract's login limits; the per-IP attempt budget raised so the attack can run long.
  t = await createTestApp({ config: { trustedProxies: ["127.0.0.1"], limits: { ...DEFAULT_LIMITS, authPerIpPerMinute: 10_000 } } });
  email = (await registerClinic(t)).user.email;
  t.app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${t.app.server!.port}`;
}, 30_000);
afterAll(async () => {
  await t.app.stop(true);
  await t.close();
}, 30_000);

const loginFrom = (address: string, password: string) =>
  fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", "x-forwarded-for": address }, body: JSON.stringify({ email, password }) });

describe("an attack on one account from another address", () => {
  test("slows the attacker with growing delays, and the owner signs in from their address at every point", async () => {
    const waits: number[] = [];
    for (let round = 0; round < 12; round++) {
      const attempt = await loginFrom(ATTACKER, `guess ${round}`);
      if (attempt.status === 429) {
        const wait = Number(attempt.headers.get("retry-after"));
        waits.push(wait);
        t.clock.advance(wait * 1000);
        expect((await loginFrom(ATTACKER, `guess ${round}`)).status).toBe(401);
      } else expect(attempt.status).toBe(401);
      // The right password from the owner's usual address: never refused.
      const owner = await loginFrom(OWNER_ADDRESS, PASSWORD);
      expect(owner.status, await owner.text()).toBe(200);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64]);
    // The attacker's right guess still waits its turn.
    const right = await loginFrom(ATTACKER, PASSWORD);
    expect(right.status).toBe(429);
  }, 60_000);

  test("the header of a caller that is no trusted proxy is ignored: its address is its own", () => {
    const proxies = new TrustedProxies(["10.0.0.0/8"]);
    const listener = (address: string) => ({ requestIP: () => ({ address }) });
    const request = new Request("http://x/", { headers: { "x-forwarded-for": "1.2.3.4, 10.0.0.9" } });
    expect(proxies.clientIp(listener("192.168.1.50"), request)).toBe("192.168.1.50");
    expect(proxies.clientIp(listener("10.0.0.2"), request)).toBe("1.2.3.4");
    expect(() => new TrustedProxies(["not-an-address"])).toThrow(/TRUSTED_PROXIES/);
  });

  test("the delay grows to at most 15 minutes, and a pair quiet that long is forgotten", () => {
    const clock = new ManualClock();
    const limits = new RestRateLimits(DEFAULT_LIMITS, clock);
    for (let i = 0; i < 40; i++) limits.recordLoginFailure("a@b.c", ATTACKER);
    expect(() => limits.assertLoginAllowed("a@b.c", ATTACKER)).toThrow(expect.objectContaining({ details: { retry_after: 900 } }));
    expect(() => limits.assertLoginAllowed("a@b.c", OWNER_ADDRESS)).not.toThrow();
    expect(() => limits.assertLoginAllowed("other@b.c", ATTACKER)).not.toThrow();
    clock.advance(15 * 60 * 1000);
    expect(() => limits.assertLoginAllowed("a@b.c", ATTACKER)).not.toThrow();
  });
});
