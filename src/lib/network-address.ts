import ipaddr from "ipaddr.js";

/** An address as the request-forgery checks see it, and the range it falls in ("unicast" is public). */
export interface ClassifiedAddress {
  address: ipaddr.IPv4 | ipaddr.IPv6;
  range: string;
}

/**
 * Classifies an IP address for the checks that keep outbound requests (webhooks, client
 * metadata documents) off the service's own network. An IPv4-mapped address (::ffff:a.b.c.d)
 * is judged as the IPv4 address it carries. An IPv4-compatible one (::a.b.c.d, deprecated by
 * RFC 4291 §2.5.5.1) is never public: `::127.0.0.1` reaches loopback on some systems.
 */
export function classifyAddress(text: string): ClassifiedAddress {
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === "ipv4") return { address: parsed, range: parsed.range() };
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const v4 = v6.toIPv4Address();
    return { address: v4, range: v4.range() };
  }
  const range = v6.range();
  if (range === "unicast" && v6.parts.slice(0, 6).every((part) => part === 0)) return { address: v6, range: "ipv4Compatible" };
  return { address: v6, range };
}

/** Words for a range that is not public, for error messages. */
export function describeRange(range: string): string {
  const names: Record<string, string> = {
    loopback: "a loopback address",
    private: "a private address",
    linkLocal: "a link-local address (cloud metadata lives there)",
    uniqueLocal: "a private address",
    unspecified: "an unspecified address",
    carrierGradeNat: "a shared (carrier NAT) address",
    ipv4Compatible: "an IPv4-compatible IPv6 address",
  };
  return names[range] ?? `a ${range} address`;
}
