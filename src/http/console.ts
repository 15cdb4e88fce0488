import type { HTMLBundle } from "bun";
import { Elysia } from "elysia";
import consolePage from "../console/index.html";
import { AppError } from "../lib/errors";

/** Where the console's scripts and styles are served; the page's references are moved here. */
export const CONSOLE_ASSETS = "/console";

/**
 * The page's own protection. Its own scripts and styles only (no inline script or `style`
 * attribute: Preact and uPlot set styles through the DOM, which a policy does not restrict);
 * never inside another site's frame, so no button (the consent page's Approve above all) can be
 * clickjacked; no Referer, so an authorization code or consent request never leaves in one.
 * X-Frame-Options repeats the framing refusal for browsers without `frame-ancestors`.
 */
export const CONSOLE_SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
} as const;

interface ConsoleFile {
  body: Uint8Array;
  contentType: string;
}

interface BuiltConsole {
  page: string;
  /** By the path the page names (under CONSOLE_ASSETS). */
  assets: Map<string, ConsoleFile>;
}

/**
 * The console as Bun's HTML bundler builds it (at first request for `bun run start`, at build
 * time inside the single binary). Bun serves an HTML bundle only as a native route of a listener,
 * which cannot carry headers; so a private listener on a loopback port serves it once, the page
 * and the scripts and styles it names are read into memory, and the listener stops. The app
 * then serves them itself, with its headers. Built on the first `GET /`, so tests and processes
 * that never show the console never bundle it.
 */
export class ConsoleBundle {
  private built: Promise<BuiltConsole> | undefined;

  constructor(private readonly bundle: HTMLBundle = consolePage) {}

  load(): Promise<BuiltConsole> {
    this.built ??= readBundle(this.bundle).catch((error: unknown) => {
      this.built = undefined; // a later request tries again
      throw error;
    });
    return this.built;
  }
}

async function readBundle(bundle: HTMLBundle): Promise<BuiltConsole> {
  // development: false, or Bun would serve the page with its hot-reload client.
  const listener = Bun.serve({ hostname: "127.0.0.1", port: 0, development: false, routes: { "/": bundle }, fetch: () => new Response(null, { status: 404 }) });
  try {
    const read = async (path: string) => {
      const response = await fetch(new URL(path, listener.url));
      if (!response.ok) throw new Error(`the console bundle has no ${path} (${response.status})`);
      return { body: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type") ?? "application/octet-stream" };
    };
    let page = new TextDecoder().decode((await read("/")).body);
    const assets = new Map<string, ConsoleFile>();
    // The bundler names its chunks by absolute path (`<script src="/chunk-….js">`); the
    // data: icon and anything else not starting with one slash is left alone.
    const named = new Set([...page.matchAll(/\s(?:src|href)="(\/[^/"][^"]*)"/g)].map((match) => match[1]!));
    for (const path of named) {
      assets.set(`${CONSOLE_ASSETS}${path}`, await read(path));
      page = page.replaceAll(`="${path}"`, `="${CONSOLE_ASSETS}${path}"`);
    }
    return { page, assets };
  } finally {
    listener.stop(true);
  }
}

/** The clinic console at `/` (its screens are hash routes, the consent page too) and its assets. */
export const consoleModule = (bundle = new ConsoleBundle()) => {
  const page = async () => new Response((await bundle.load()).page, { headers: { "content-type": "text/html;charset=utf-8", "cache-control": "no-cache", ...CONSOLE_SECURITY_HEADERS } });
  // The first run's setup link and invitation links are pages of their own (their token rides in the fragment, which never reaches a server).
  return new Elysia()
    .get("/", page, { detail: { hide: true } })
    .get("/setup", page, { detail: { hide: true } })
    .get("/join", page, { detail: { hide: true } })
    // A clinic's public booking page and its manage link (the token in the fragment).
    .get("/book/:slug", page, { detail: { hide: true } })
    .get("/book/:slug/manage", page, { detail: { hide: true } })
    .get(
      `${CONSOLE_ASSETS}/*`,
      async ({ path }) => {
        const asset = (await bundle.load()).assets.get(path);
        if (!asset) throw new AppError("NOT_FOUND", `No route for GET ${path}`);
        // The bundler's names carry a content hash, so a name never changes content.
        return new Response(asset.body, { headers: { "content-type": asset.contentType, "cache-control": "public, max-age=31536000, immutable", ...CONSOLE_SECURITY_HEADERS } });
      },
      { detail: { hide: true } },
    );
};
