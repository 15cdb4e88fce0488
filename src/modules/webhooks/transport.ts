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

/**
 * One POST to the checked address (the name is still sent as Host and for TLS), no redirects
 * followed, the answer's body drained and dropped, the whole exchange bounded by `timeoutMs`.
 */
export function post(destination: Destination, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const { url, address } = destination;
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const request = client.request(
      {
        method: "POST",
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        // Connect to the address that was checked, never to a second DNS answer.
        lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
          options?.all ? callback(null, [address]) : callback(null, address.address, address.family)) as never,
      },
      (response) => {
        response.resume();
        response.on("end", () => finish({ status: response.statusCode ?? null, retryAfterSeconds: retryAfter(response.headers["retry-after"]), error: null }));
        response.on("error", (error) => finish({ status: response.statusCode ?? null, retryAfterSeconds: null, error: error.message }));
      },
    );
    const timer = setTimeout(() => {
      request.destroy();
      finish({ status: null, retryAfterSeconds: null, error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    request.on("error", (error) => finish({ status: null, retryAfterSeconds: null, error: error.message }));
    request.end(body);
  });
}

function retryAfter(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000));
}
