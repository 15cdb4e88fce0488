/**
 * The one address check behind every outbound request a caller can aim (webhook URLs, client
 * metadata documents): an IPv4 address carried inside IPv6 is judged as what it reaches, so
 * `[::127.0.0.1]` (IPv4-compatible) and `[::ffff:10.0.0.1]` (IPv4-mapped) are not public.
 */
import { describe, expect, test } from "bun:test";
import { classifyAddress } from "../../src/lib/network-address";
import type { TestApp } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { config: { webhooks: { dispatch: false, retryScheduleMs: [0], allowedNetworks: [], allowHttp: true, timeoutMs: 2000, dueDays: 7, dueHour: 8 } } });

describe("the shared address check", () => {
  test.each([
    // How URL parsers write [::127.0.0.1] and [::8.8.8.8].
    ["::7f00:1", "ipv4Compatible"],
    ["::808:808", "ipv4Compatible"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:10.0.0.1", "private"],
    ["::1", "loopback"],
    ["8.8.8.8", "unicast"],
    ["2606:4700::1111", "unicast"],
  ])("%s is %s", (address, range) => {
    expect(classifyAddress(address).range).toBe(range);
  });

  test.each([["http://[::127.0.0.1]/hook"], ["http://[::7f00:1]:8080/hook"], ["https://[::10.0.0.1]/hook"]])("a webhook to %s is refused with 422 and nothing stored", async (url) => {
    const before = await t.count("webhook_endpoints");
    const r = await owner.as<{ code: string; message: string }>("POST", "/api/v1/webhooks", { json: { url, events: ["*"] } });
    expect(r.status, r.text).toBe(422);
    expect(r.body.message).toContain("IPv4-compatible");
    expect(await t.count("webhook_endpoints")).toBe(before);
  });

  test.each([["http://[::127.0.0.1]/client.json"], ["https://[::127.0.0.1]/client.json"]])("a client id %s is refused with an error page, nothing fetched", async (clientId) => {
    const r = await t.app.handle(new Request(`http://localhost/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: "http://127.0.0.1:1/cb", code_challenge: "x".repeat(43), code_challenge_method: "S256", state: "s" })}`));
    expect(r.status).toBe(400);
    expect(r.headers.get("location")).toBeNull();
  });
});
