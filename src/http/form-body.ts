import { Elysia } from "elysia";
import { AppError } from "../lib/errors";

/**
 * `application/x-www-form-urlencoded` bodies, which OAuth's token and revocation endpoints take
 * (RFC 6749 §4.1.3, RFC 7009 §2.1), read up to `maxBytes` into a plain object of strings (a
 * repeated name keeps its first value). Only the listed paths take them; every other route still
 * gets the JSON reader's 415. Registered before the JSON reader, which answers everything else.
 */
export const formBody = (paths: readonly string[], maxBytes: number) =>
  new Elysia({ name: "form-body" }).onParse({ as: "global" }, async ({ request, contentType }) => {
    if (!contentType?.startsWith("application/x-www-form-urlencoded")) return;
    if (!paths.includes(new URL(request.url).pathname)) return;
    const text = await request.text();
    if (Buffer.byteLength(text) > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `The body exceeds ${maxBytes} bytes`);
    const fields: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(text)) if (!(name in fields)) fields[name] = value;
    return fields;
  });
