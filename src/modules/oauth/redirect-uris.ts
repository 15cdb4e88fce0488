/** Loopback names: a client on the person's own machine (RFC 8252). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Whether a redirect URI may be registered: https, loopback http, or a private-use scheme (cursor://…); never a fragment. */
export function redirectUriProblem(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url) return `${value} is not a URL`;
  if (url.hash) return `${value} has a fragment`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") return isLoopbackHost(url.hostname) ? undefined : `${value}: plain http is allowed only for loopback redirect URIs`;
  if (url.protocol === "javascript:" || url.protocol === "data:" || url.protocol === "file:") return `${value}: the scheme ${url.protocol} cannot be a redirect URI`;
  return undefined;
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
