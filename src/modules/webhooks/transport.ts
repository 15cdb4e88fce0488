import http from "node:http";
import https from "node:https";
import type { Destination } from "./destination";

export interface SendResult {
  status: number | null;
  /** Seconds from Retry-After (429, 5xx), when given. */
  retryAfterSeconds: number | null;
  durationMs: number;
  error: string | null;
}

/** One request to a checked address. */
export interface ExchangeOptions {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Keep the answer's body up to this many bytes (a longer one is an error); without it the body is drained and dropped. */
  maxBodyBytes?: number;
}

export interface ExchangeResult extends SendResult {
  headers: http.IncomingHttpHeaders;
  /** The answer's body, when `maxBodyBytes` was given and the answer arrived whole. */
  body: Buffer | null;
}

/**
 * One request to the checked address (the name is still sent as Host and for TLS), no
 * redirects followed, the whole exchange bounded by `timeoutMs`.
 */
export function exchange(destination: Destination, options: ExchangeOptions): Promise<ExchangeResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const { url, address } = destination;
  const client = url.protocol === "https:" ? https : http;
  const headers = options.body === undefined ? options.headers : { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<ExchangeResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const failed = (error: string, status: number | null = null) => finish({ status, retryAfterSeconds: null, error, headers: {}, body: null });
    const request = client.request(
      {
        method: options.method,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers,
        // Connect to the address that was checked, never to a second DNS answer.
        lookup: ((_host: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) =>
          lookupOptions?.all ? callback(null, [address]) : callback(null, address.address, address.family)) as never,
      },
      (response) => {
        const limit = options.maxBodyBytes;
        const chunks: Buffer[] = [];
        let size = 0;
        if (limit === undefined) response.resume();
        else
          response.on("data", (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > limit) {
              request.destroy();
              failed(`the answer is larger than ${limit} bytes`, response.statusCode ?? null);
            } else chunks.push(chunk);
          });
        response.on("end", () =>
          finish({
            status: response.statusCode ?? null,
            retryAfterSeconds: retryAfter(response.headers["retry-after"]),
            error: null,
            headers: response.headers,
            body: limit === undefined ? null : Buffer.concat(chunks),
          }),
        );
        response.on("error", (error) => failed(error.message, response.statusCode ?? null));
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      failed(`no answer within ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    request.on("error", (error) => failed(error.message));
    request.end(options.body);
  });
}

/** One POST to the checked address, the answer's body drained and dropped. */
export async function post(destination: Destination, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
  const { status, retryAfterSeconds, durationMs, error } = await exchange(destination, { method: "POST", headers, body, timeoutMs });
  return { status, retryAfterSeconds, durationMs, error };
}

function retryAfter(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}
