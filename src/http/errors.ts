import { Elysia, ValidationError } from "elysia";
import { AppError, envelope, type FieldError } from "../lib/errors";
import { isConnectionError, loggableError } from "../lib/error-log";
import type { Logger } from "../lib/logger";
import { dateProblem, timestampProblem } from "../lib/time";
import { loggablePath, type RequestStates } from "./request-context";

type SchemaLike = { anyOf?: SchemaLike[]; const?: unknown; enum?: unknown[]; type?: string; format?: string; minimum?: number; maximum?: number };

/** Words a client can act on for the common refusals, instead of TypeBox's generic ones. */
export function readableMessage(schema: SchemaLike | undefined, value: unknown, fallback: string): string {
  if (!schema) return fallback;
  const choices = schema.enum ?? (schema.anyOf?.every((branch) => "const" in branch) ? schema.anyOf.map((branch) => branch.const) : undefined);
  if (choices) return `Must be one of: ${choices.join(", ")}`;
  const numeric = schema.type === "integer" || schema.type === "number" ? schema : schema.anyOf?.find((branch) => branch.type === "integer" || branch.type === "number");
  if (numeric) {
    const range = numeric.minimum !== undefined && numeric.maximum !== undefined ? ` from ${numeric.minimum} to ${numeric.maximum}` : "";
    return `Must be ${numeric.type === "integer" ? "an integer" : "a number"}${range}`;
  }
  if (typeof value === "string" && schema.format === "date") return dateProblem(value) ?? fallback;
  if (typeof value === "string" && schema.format === "date-time") return timestampProblem(value) ?? fallback;
  return fallback;
}

/** Each refusal with `path` naming where the value came from: `body.items.0.quantity`, `query.limit`, `params.id`. */
type Source = "body" | "query" | "params" | "headers";

/**
 * Where a refused value came from. Elysia says so, except for a value its own type coercion
 * refuses from inside a decode step (type "property"); query integers out of range are refused
 * by the input rules before that step, with their names, so what still arrives here is a body value.
 */
const sourceOf = (error: ValidationError): Source =>
  error.type === "body" || error.type === "query" || error.type === "params" || error.type === "headers" ? error.type : "body";

function fieldErrors(error: ValidationError): FieldError[] {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  const source = sourceOf(error);
  for (const issue of error.all) {
    const pointer = ("path" in issue ? String(issue.path) : "").replace(/^\//, "").replaceAll("/", ".");
    const path = pointer ? `${source}.${pointer}` : source;
    const generic = String(("summary" in issue && issue.summary) || issue.message);
    const message = readableMessage("schema" in issue ? (issue.schema as SchemaLike) : undefined, "value" in issue ? issue.value : undefined, generic);
    const key = `${path}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    fields.push({ path, message });
  }
  return fields;
}

/** Turns any thrown thing into an AppError; unexpected ones become INTERNAL_ERROR. */
export function toAppError(code: string | number, error: unknown, where: string): AppError {
  if (error instanceof AppError) return error;
  // Elysia wraps whatever the body parser throws; our parser's own refusals come through as is.
  if (code === "PARSE" && error instanceof Error && error.cause instanceof AppError) return error.cause;
  if (code === "VALIDATION" && error instanceof ValidationError) {
    if (error.type === "response") return new AppError("INTERNAL_ERROR", "The service produced an invalid response");
    return AppError.validation(fieldErrors(error), `Invalid ${sourceOf(error)}`);
  }
  if (code === "PARSE") return new AppError("INVALID_JSON", "The request body is not valid JSON");
  if (code === "NOT_FOUND") return new AppError("NOT_FOUND", `No route for ${where}`);
  if (code === "INVALID_COOKIE_SIGNATURE") return new AppError("INVALID_TOKEN", "The cookie is not valid");
  if (isConnectionError(error)) return AppError.unavailable();
  return new AppError("INTERNAL_ERROR", "An unexpected error occurred");
}

/** The one place errors become responses: the one envelope, for every error. */
export const errorHandler = (logger: Logger, states: RequestStates) =>
  new Elysia({ name: "errors" }).onError({ as: "global" }, ({ code, error, request, set, path }) => {
    const state = states.of(request);
    const appError = toAppError(code, error, `${request.method} ${path}`);
    if (appError.code === "SERVICE_UNAVAILABLE") {
      logger.warn("database unavailable", { request_id: state.id, method: request.method, path: loggablePath(path), ...loggableError(error) });
    }
    if (appError.code === "INTERNAL_ERROR") {
      logger.error("unhandled error", { request_id: state.id, method: request.method, path: loggablePath(path), ...loggableError(error) });
    }
    const headers: Record<string, string> = {
      "content-type": "application/json; charset=utf-8",
      "x-request-id": state.id,
      ...appError.headers,
    };
    if (appError.status === 401 && !headers["www-authenticate"]) headers["www-authenticate"] = "Bearer";
    for (const [name, value] of Object.entries(set.headers)) {
      if (name.toLowerCase().startsWith("x-ratelimit") && typeof value === "string") headers[name] = value;
    }
    set.status = appError.status;
    return new Response(JSON.stringify(envelope(appError, state.id)), { status: appError.status, headers });
  });

/**
 * Reads a body up to `maxBytes`, stopping as soon as more arrives: a chunked body with no
 * Content-Length is never buffered past the cap.
 */
async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  // A declared length (already checked against the cap) bounds the body: HTTP framing stops
  // reading there, so it is read in one piece instead of chunk by chunk.
  if (request.headers.has("content-length")) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `The body exceeds ${maxBytes} bytes`);
    return bytes;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `The body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Refuses bytes that are not UTF-8 instead of turning them into U+FFFD. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * JSON bodies: size cap before parsing, a malformed body is 400 INVALID_JSON, and an empty
 * body is an empty object so schema validation (not the parser) reports missing fields.
 */
export const jsonBody = (maxBytes: number) =>
  new Elysia({ name: "json-body" }).onParse({ as: "global" }, async ({ request, contentType }) => {
    const declared = Number(request.headers.get("content-length") ?? 0);
    if (declared > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `The body exceeds ${maxBytes} bytes`);
    if (!contentType || contentType.startsWith("application/json")) {
      const bytes = await readCapped(request, maxBytes);
      let text: string;
      try {
        text = UTF8.decode(bytes);
      } catch {
        throw new AppError("INVALID_JSON", "The request body is not valid UTF-8");
      }
      if (text.trim() === "") return {};
      try {
        return JSON.parse(text);
      } catch {
        throw new AppError("INVALID_JSON", "The request body is not valid JSON");
      }
    }
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send bodies as application/json");
  });
