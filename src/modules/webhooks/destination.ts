import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { AppError } from "../../lib/errors";
import { classifyAddress, describeRange } from "../../lib/network-address";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Names to addresses; tests inject their own (the test machine's DNS is closed). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** Where a webhook request goes: its URL, and the address that was checked (the one connected to). */
export interface Destination {
  url: URL;
  address: ResolvedAddress;
}

/**
 * Webhook URLs must not reach the service's own network (request forgery): https (or http
 * outside production), and every address the name resolves to public, unless inside one of the
 * allowed networks. The request then connects to the address checked here, so a second answer
 * from DNS (rebinding) is never used.
 */
export class DestinationPolicy {
  private readonly allowed: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(
    allowedNetworks: string[],
    private readonly allowHttp: boolean,
    public resolveHost: HostResolver = systemResolver,
  ) {
    this.allowed = allowedNetworks.map((cidr) => {
      try {
        return ipaddr.parseCIDR(cidr);
      } catch {
        throw new Error(`WEBHOOK_ALLOWED_NETWORKS: "${cidr}" is not a CIDR such as 192.168.1.0/24`);
      }
    });
  }

  /** The URL's form alone (no DNS): for a 422 before anything is stored. */
  parse(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refusal(raw, "is not an absolute URL");
    }
    if (url.protocol !== "https:" && !(this.allowHttp && url.protocol === "http:")) throw refusal(raw, this.allowHttp ? "must use https or http" : "must use https");
    if (url.username || url.password) throw refusal(raw, "must not carry credentials");
    return url;
  }

  /** Resolves the URL's host and checks every address; the first is the one to connect to. */
  async check(raw: string): Promise<Destination> {
    const url = this.parse(raw);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    let addresses: ResolvedAddress[];
    if (ipaddr.isValid(host)) addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
    else {
      try {
        addresses = await this.resolveHost(host);
      } catch {
        throw refusal(raw, `has a host name (${host}) that does not resolve`);
      }
      if (!addresses.length) throw refusal(raw, `has a host name (${host}) that does not resolve`);
    }
    for (const { address } of addresses) {
      const problem = this.problemWith(address);
      if (problem) throw refusal(raw, `resolves to ${address}, ${problem}`);
    }
    return { url, address: addresses[0]! };
  }

  private problemWith(address: string): string | null {
    const { address: parsed, range } = classifyAddress(address);
    if (this.allowed.some(([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits))) return null;
    if (range === "unicast") return null;
    return `${describeRange(range)}, which webhooks may not reach (allow it with WEBHOOK_ALLOWED_NETWORKS)`;
  }
}

const refusal = (url: string, reason: string) =>
  AppError.validation([{ path: "body.url", message: `${url} ${reason}` }], `The webhook URL ${url} ${reason}`);
