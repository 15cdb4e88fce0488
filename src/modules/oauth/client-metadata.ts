import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { isLoopbackHost, redirectUriProblem } from "./redirect-uris";

/** A client as the authorization endpoint needs it, however it was registered. */
export interface OAuthClient {
  clientId: string;
  clientName: string;
  redirectUris: string[];
}

/** Why a client id was refused, said to the person in the browser (no redirect is safe then). */
export class ClientRefused extends Error {}

export const METADATA_DOCUMENT_MAX_BYTES = 16 * 1024;
export const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;

/** Whether a client id is a Client ID Metadata Document URL (an https URL with a path). */
export function isMetadataDocumentId(clientId: string): boolean {
  const url = URL.parse(clientId);
  return url !== null && (url.protocol === "https:" || url.protocol === "http:") && url.pathname !== "/";
}

/** Only public unicast addresses may be fetched: never loopback, private, link-local or reserved ones. */
async function assertPublicHost(hostname: string): Promise<void> {
  const host = hostname.replace(/^\[|\]$/g, "");
  const addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  if (!addresses.length) throw new ClientRefused(`The client id's host ${hostname} has no address`);
  for (const address of addresses) {
    let parsed = ipaddr.parse(address);
    if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
    if (parsed.range() !== "unicast") throw new ClientRefused(`The client id's host ${hostname} is not a public address (${parsed.range()})`);
  }
}

/** Reads a body up to `limit` bytes, refusing a longer one. */
async function cappedText(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > limit) throw new ClientRefused(`The client metadata document is larger than ${limit} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > limit) throw new ClientRefused(`The client metadata document is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * Fetches a Client ID Metadata Document: https only, from a public address, within a size and
 * time limit, with no redirects; `client_id` must equal the URL. A loopback http client id is
 * allowed only when the service itself is served on loopback http (`allowLoopback`), for
 * development and tests.
 */
export async function fetchClientMetadata(clientId: string, allowLoopback: boolean): Promise<OAuthClient> {
  const url = new URL(clientId);
  const loopback = isLoopbackHost(url.hostname);
  if (loopback && !allowLoopback) throw new ClientRefused("A client id on a loopback address is allowed only when this service runs on loopback http");
  if (url.protocol !== "https:" && !(loopback && url.protocol === "http:")) throw new ClientRefused("A client id URL must use https");
  if (!loopback) await assertPublicHost(url.hostname);
  let response: Response;
  try {
    response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(METADATA_DOCUMENT_TIMEOUT_MS), headers: { accept: "application/json" } });
  } catch {
    throw new ClientRefused(`The client metadata document at ${clientId} could not be fetched within ${METADATA_DOCUMENT_TIMEOUT_MS / 1000} s`);
  }
  if (response.status !== 200) throw new ClientRefused(`The client metadata document at ${clientId} answered ${response.status}`);
  let document: unknown;
  try {
    document = JSON.parse(await cappedText(response, METADATA_DOCUMENT_MAX_BYTES));
  } catch (error) {
    if (error instanceof ClientRefused) throw error;
    throw new ClientRefused("The client metadata document is not JSON");
  }
  if (typeof document !== "object" || document === null) throw new ClientRefused("The client metadata document is not a JSON object");
  const fields = document as Record<string, unknown>;
  if (fields.client_id !== clientId) throw new ClientRefused("The client metadata document's client_id is not its own URL");
  const redirectUris = fields.redirect_uris;
  if (!Array.isArray(redirectUris) || !redirectUris.length || !redirectUris.every((uri) => typeof uri === "string" && !redirectUriProblem(uri))) {
    throw new ClientRefused("The client metadata document lists no valid redirect_uris");
  }
  const name = typeof fields.client_name === "string" && fields.client_name.trim() ? fields.client_name.trim().slice(0, 200) : url.host;
  return { clientId, clientName: name, redirectUris: redirectUris as string[] };
}
