import ipaddr from "ipaddr.js";
import type { Clock } from "../../lib/clock";
import { LruMap } from "../../lib/lru";
import { classifyAddress, describeRange } from "../../lib/network-address";
import { systemResolver, type HostResolver, type ResolvedAddress } from "../webhooks/destination";
import { exchange } from "../webhooks/transport";
import { isLoopbackHost, redirectUriProblem } from "./redirect-uris";

/** A client as the authorization endpoint needs it, however it was registered. */
export interface OAuthClient {
  clientId: string;
  clientName: string;
  redirectUris: string[];
  /** Whether the name was checked by someone: never, for a name the client chose itself (registration or its own document). */
  nameVerified: boolean;
}

/** Why a client id was refused, said to the person in the browser (no redirect is safe then). */
export class ClientRefused extends Error {}

export const METADATA_DOCUMENT_MAX_BYTES = 16 * 1024;
export const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;
/** A document is kept as its HTTP caching headers allow, never longer than this. */
export const METADATA_DOCUMENT_MAX_AGE_SECONDS = 3600;
const CACHED_DOCUMENTS = 1000;

/** Whether a client id is a Client ID Metadata Document URL (an https URL with a path). */
export function isMetadataDocumentId(clientId: string): boolean {
  const url = URL.parse(clientId);
  return url !== null && (url.protocol === "https:" || url.protocol === "http:") && url.pathname !== "/";
}

/**
 * How long an answer may be reused by a shared cache (RFC 9111 §4.2.1): s-maxage, max-age,
 * Expires, or a tenth of its age since Last-Modified; none when it must not be stored or
 * revalidated each time; at most `METADATA_DOCUMENT_MAX_AGE_SECONDS`.
 */
export function freshnessSeconds(headers: Record<string, string | string[] | undefined>): number {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  };
  const directives = new Map(
    (header("cache-control") ?? "")
      .split(",")
      .map((part) => part.trim().toLowerCase().split("="))
      .filter(([name]) => name)
      .map(([name, value]) => [name!, value?.replace(/"/g, "")]),
  );
  if (directives.has("no-store") || directives.has("no-cache") || directives.has("private")) return 0;
  const age = Number(header("age") ?? 0) || 0;
  const date = Date.parse(header("date") ?? "");
  let lifetime: number | undefined;
  for (const name of ["s-maxage", "max-age"]) {
    const value = Number(directives.get(name));
    if (lifetime === undefined && directives.has(name) && Number.isFinite(value)) lifetime = value;
  }
  const expires = Date.parse(header("expires") ?? "");
  if (lifetime === undefined && !Number.isNaN(expires) && !Number.isNaN(date)) lifetime = (expires - date) / 1000;
  const modified = Date.parse(header("last-modified") ?? "");
  if (lifetime === undefined && !Number.isNaN(modified) && !Number.isNaN(date)) lifetime = (date - modified) / 10_000;
  return Math.max(0, Math.min(METADATA_DOCUMENT_MAX_AGE_SECONDS, Math.floor((lifetime ?? 0) - age)));
}

/**
 * Client ID Metadata Documents, fetched and kept by the app: https only, from a public address
 * (the address checked is the one connected to, so a second DNS answer is never used), within a
 * size and time limit, no redirects; `client_id` must equal the URL. A loopback http client id
 * is allowed only when the service's configured public URL is itself loopback http
 * (`allowLoopback`): without it no request is made to a loopback port.
 */
export class ClientMetadataDocuments {
  private readonly cache = new LruMap<string, { client: OAuthClient; freshUntil: number }>(CACHED_DOCUMENTS);

  constructor(
    private readonly clock: Clock,
    public resolveHost: HostResolver = systemResolver,
  ) {}

  async find(clientId: string, allowLoopback: boolean): Promise<OAuthClient> {
    const url = new URL(clientId);
    const loopback = isLoopbackHost(url.hostname);
    if (loopback && !allowLoopback) throw new ClientRefused("A client id on a loopback address is allowed only when this service's PUBLIC_URL is loopback http");
    if (url.protocol !== "https:" && !(loopback && url.protocol === "http:")) throw new ClientRefused("A client id URL must use https");
    if (url.username || url.password) throw new ClientRefused("A client id URL must not carry credentials");
    const now = this.clock.now().getTime();
    const cached = this.cache.get(clientId);
    if (cached && cached.freshUntil > now) return cached.client;
    const address = await this.checkedAddress(url, loopback);
    const answer = await exchange({ url, address }, { method: "GET", headers: { accept: "application/json" }, timeoutMs: METADATA_DOCUMENT_TIMEOUT_MS, maxBodyBytes: METADATA_DOCUMENT_MAX_BYTES });
    if (answer.error?.includes("larger than")) throw new ClientRefused(`The client metadata document is larger than ${METADATA_DOCUMENT_MAX_BYTES} bytes`);
    if (answer.error || answer.body === null) throw new ClientRefused(`The client metadata document at ${clientId} could not be fetched within ${METADATA_DOCUMENT_TIMEOUT_MS / 1000} s`);
    if (answer.status !== 200) throw new ClientRefused(`The client metadata document at ${clientId} answered ${answer.status}`);
    const client = parseDocument(clientId, url, answer.body);
    const fresh = freshnessSeconds(answer.headers);
    if (fresh > 0) this.cache.set(clientId, { client, freshUntil: now + fresh * 1000 });
    else this.cache.delete(clientId);
    return client;
  }

  /** The address to connect to: the loopback literal itself, or every address of the name checked to be public. */
  private async checkedAddress(url: URL, loopback: boolean): Promise<ResolvedAddress> {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (loopback) return host === "localhost" ? { address: "127.0.0.1", family: 4 } : { address: host, family: host.includes(":") ? 6 : 4 };
    let addresses: ResolvedAddress[];
    if (ipaddr.isValid(host)) addresses = [{ address: host, family: ipaddr.parse(host).kind() === "ipv6" ? 6 : 4 }];
    else {
      try {
        addresses = await this.resolveHost(host);
      } catch {
        addresses = [];
      }
    }
    if (!addresses.length) throw new ClientRefused(`The client id's host ${url.hostname} has no address`);
    for (const { address } of addresses) {
      const { range } = classifyAddress(address);
      if (range !== "unicast") throw new ClientRefused(`The client id's host ${url.hostname} is not a public address (${describeRange(range)})`);
    }
    return addresses[0]!;
  }
}

function parseDocument(clientId: string, url: URL, body: Buffer): OAuthClient {
  let document: unknown;
  try {
    document = JSON.parse(body.toString("utf8"));
  } catch {
    throw new ClientRefused("The client metadata document is not JSON");
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) throw new ClientRefused("The client metadata document is not a JSON object");
  const fields = document as Record<string, unknown>;
  if (fields.client_id !== clientId) throw new ClientRefused("The client metadata document's client_id is not its own URL");
  const redirectUris = fields.redirect_uris;
  if (!Array.isArray(redirectUris) || !redirectUris.length || !redirectUris.every((uri) => typeof uri === "string" && !redirectUriProblem(uri))) {
    throw new ClientRefused("The client metadata document lists no valid redirect_uris");
  }
  const name = typeof fields.client_name === "string" && fields.client_name.trim() ? fields.client_name.trim().slice(0, 200) : url.host;
  return { clientId, clientName: name, redirectUris: redirectUris as string[], nameVerified: false };
}
