/** Loopback names: a client on the person's own machine (RFC 8252). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Private-use URI schemes of MCP clients that predate the reverse-domain rule and are not
 * executed by the operating system itself (`cursor://` is Cursor's registered callback).
 */
const KNOWN_CLIENT_SCHEMES: readonly string[] = ["cursor:", "vscode:", "vscode-insiders:", "windsurf:"];

/** A private-use scheme in reverse-domain form, such as `com.example.app:` (RFC 8252 §7.1): at least two labels. */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/;

/**
 * Whether a redirect URI may be registered: https, loopback http, or a private-use scheme in
 * reverse-domain form (RFC 8252 §7.1), never a fragment. Any other scheme (search-ms:,
 * ms-officecmd:, vbscript:, javascript:, data:, …) would hand the browser to a program the
 * operating system picks, so it is refused.
 */
export function redirectUriProblem(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url) return `${value} is not a URL`;
  if (url.hash) return `${value} has a fragment`;
  if (url.username || url.password) return `${value} carries credentials`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") return isLoopbackHost(url.hostname) ? undefined : `${value}: plain http is allowed only for loopback redirect URIs`;
  if (REVERSE_DOMAIN_SCHEME.test(url.protocol) || KNOWN_CLIENT_SCHEMES.includes(url.protocol)) return undefined;
  return `${value}: a redirect URI must use https, loopback http, or a private-use scheme in reverse-domain form (com.example.app:/callback)`;
}

/**
 * A redirect URI matches a registered one exactly, except that a loopback one matches on any
 * port (native apps listen on a port chosen when they start, RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const asked = URL.parse(requested);
  if (!asked || asked.protocol !== "http:" || !isLoopbackHost(asked.hostname)) return false;
  return registered.some((candidate) => {
    const known = URL.parse(candidate);
    if (!known || known.protocol !== "http:" || known.hostname !== asked.hostname) return false;
    return known.pathname === asked.pathname && known.search === asked.search;
  });
}

/** Whether every redirect URI of a client is loopback (the consent page warns: only a program on the approving person's machine receives the code). */
export function onlyLoopback(redirectUris: readonly string[]): boolean {
  return redirectUris.every((uri) => {
    const url = URL.parse(uri);
    return url !== null && url.protocol === "http:" && isLoopbackHost(url.hostname);
  });
}

/** Where a redirect URI sends the browser, as the consent page names it: its exact scheme and host. */
export function redirectTarget(redirectUri: string): { scheme: string; host: string } {
  const url = new URL(redirectUri);
  return { scheme: url.protocol.slice(0, -1), host: url.host };
}
