import type { AnyElysia } from "elysia";
import pkg from "../../package.json";
import { ErrorEnvelope } from "./common-model";
import { plainJsonSchema, withClosedObjects, withOpenObjects } from "./json-schema";

/**
 * The OpenAPI 3.1 document, generated from the same TypeBox schemas that validate each route
 * (nothing is written twice). Elysia's OpenAPI plugin could not describe bodies read by our own
 * capped JSON reader, showed query integers as strings and gave every route the JWT scheme, so
 * the document is built here from the app's route table; Swagger UI renders it at /docs.
 */
type Json = Record<string, unknown>;
type Schema = Json & { anyOf?: Schema[]; type?: unknown; format?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[] };

interface RouteLike {
  method: string;
  path: string;
  hooks?: { body?: Schema; query?: Schema; params?: Schema; response?: Record<string, Schema> | Schema; detail?: Json };
}

const ERROR = ErrorEnvelope as unknown as Schema;
const HIDDEN = /^\/(docs|openapi\.json)/;
const PUBLIC_PATHS: ReadonlySet<string> = new Set(["/register", "/health", "/ready", "/mcp/health", "/api/v1/auth/register", "/api/v1/auth/login", "/api/v1/auth/refresh", "/api/v1/auth/logout", "/api/v1/calendar/{token}"]);

const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "204": "No content",
  "400": "INVALID_JSON, INVALID_CURSOR, INVALID_PAGINATION, INVALID_IDEMPOTENCY_KEY or a refused query",
  "401": "AUTH_REQUIRED, INVALID_TOKEN, TOKEN_EXPIRED or an invalid, revoked or expired API key",
  "403": "FORBIDDEN (role), INSUFFICIENT_SCOPE or ORIGIN_NOT_ALLOWED",
  "404": "NOT_FOUND (also another clinic's record)",
  "405": "METHOD_NOT_ALLOWED",
  "409": "CONFLICT, EMAIL_TAKEN, INVALID_STATE_TRANSITION, SLOT_TAKEN or an Idempotency-Key conflict",
  "413": "PAYLOAD_TOO_LARGE (over MAX_BODY_BYTES)",
  "415": "UNSUPPORTED_MEDIA_TYPE (send application/json)",
  "422": "VALIDATION_FAILED: details.fields names each refused value (body.…, query.…, params.…); also unknown query parameters and body properties",
  "429": "Rate limit or quota exceeded; Retry-After says when to retry",
  "500": "INTERNAL_ERROR, without internals",
  "503": "SERVICE_UNAVAILABLE: the database is unavailable; Retry-After says when to retry",
};

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema });
const RATE_HEADERS = {
  "X-RateLimit-Limit": header("Calls allowed in the window", { type: "integer" }),
  "X-RateLimit-Remaining": header("Calls left in the window", { type: "integer" }),
  "X-RateLimit-Reset": header("When the window resets (Unix seconds)", { type: "integer" }),
};

const SESSION_COOKIE = {
  "Set-Cookie": header("The refresh token, rotated: an HttpOnly, SameSite=Strict cookie for /api/v1/auth (Secure unless turned off for local HTTP); logout clears it"),
};

/**
 * What a route declares in `detail` about the headers it sends, beyond the ones every route of
 * its kind gets: `x-rate-limited` (it counts calls and says so in `X-RateLimit-*` on every
 * answer: the auth routes per IP, the MCP routes against the key's daily quota), and
 * `x-session-cookie` (its successes set the refresh cookie).
 */
interface HeaderHints {
  rateLimited: boolean;
  sessionCookie: boolean;
  /** It answers a file (`x-media-type`), named for saving in Content-Disposition. */
  file: boolean;
}

/** Every header an answer of this status may carry, as the service sends them. */
function responseHeaders(status: string, path: string, secured: boolean, idempotent: boolean, hints: HeaderHints): Json {
  const headers: Json = { "X-Request-ID": { ...header("The request id (echoed when the client sent a safe one)"), required: true } };
  if ((secured && !path.startsWith("/mcp")) || hints.rateLimited) Object.assign(headers, RATE_HEADERS);
  if (status === "401") headers["WWW-Authenticate"] = header("Bearer: the credential this route takes");
  // An OAuth connection calling outside its scopes is told which scope to ask for (RFC 6750 insufficient_scope).
  if (status === "403" && path.startsWith("/mcp")) headers["WWW-Authenticate"] = header('Bearer error="insufficient_scope" with the scope needed, when an OAuth connection lacks it');
  if (status === "405") headers.Allow = header("The methods the path answers");
  if (status === "429" || status === "503") headers["Retry-After"] = header("Seconds to wait before retrying", { type: "integer" });
  if (idempotent && status === "200") headers["Idempotent-Replayed"] = header("true when this is a replay of an earlier response with the same Idempotency-Key");
  if (hints.sessionCookie && status.startsWith("2")) Object.assign(headers, SESSION_COOKIE);
  if (hints.file && status === "200") headers["Content-Disposition"] = header("The file's name, for saving it (folio and type)");
  return headers;
}

const FORMAT_EXAMPLES: Record<string, string> = { uuid: "0192f0c4-8a1e-7c3b-9d2e-4f5a6b7c8d9e", email: "ana@clinic.cl", date: "2026-01-15", "date-time": "2026-01-15T12:00:00Z" };

/** A plausible example value for a schema, for request bodies. */
function exampleOf(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 6) return undefined;
  const examples = schema.examples as unknown[] | undefined;
  if (examples?.length) return examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf) return exampleOf(schema.anyOf.find((b) => b.type !== "null") ?? schema.anyOf[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "object": {
      const out: Json = {};
      for (const [name, inner] of Object.entries(schema.properties ?? {})) out[name] = exampleOf(inner, depth + 1);
      return out;
    }
    case "array":
      return [exampleOf(schema.items, depth + 1)];
    case "integer":
    case "number":
      return (schema.minimum as number | undefined) ?? 1;
    case "boolean":
      return true;
    case "string":
      return FORMAT_EXAMPLES[schema.format ?? ""] ?? "example".padEnd((schema.minLength as number | undefined) ?? 0, " text").slice(0, (schema.maxLength as number | undefined) ?? 100);
  }
  return undefined;
}

function openApiPath(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/$/, "") : path;
  return trimmed.replaceAll(/:([A-Za-z_]+)/g, "{$1}");
}

function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1/, "")
    .split("/")
    .filter(Boolean)
    .map((part) => (part.startsWith("{") ? `By${part.slice(1, -1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]/))
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1));
  return method.toLowerCase() + (words.join("") || "Root");
}

const singular = (noun: string) => noun.replace(/ies$/, "y").replace(/s$/, "");
const withArticle = (noun: string) => `${/^[aeiou]/i.test(noun) ? "an" : "a"} ${noun}`;

function summaryOf(method: string, path: string): string {
  const segments = path.split("/").filter(Boolean);
  const last = segments.at(-1) ?? "";
  const onItem = last.startsWith("{");
  if (!onItem && method === "POST" && segments.at(-2)?.startsWith("{")) return `${last[0]!.toUpperCase()}${last.slice(1)} ${withArticle(singular(segments.at(-3) ?? "record"))}`;
  const noun = ((onItem ? segments.at(-2) : last) ?? "record").replaceAll(/[-_]/g, " ");
  if (method === "GET" && !onItem) return `List ${noun}`;
  const verb = { GET: "Get", POST: "Create", PATCH: "Update", DELETE: "Delete", PUT: "Replace" }[method] ?? method;
  return `${verb} ${withArticle(singular(noun))}`;
}

function securityOf(path: string): Json[] {
  // Online booking's routes are for tutors without an account (a manage link carries its own signed token).
  if (PUBLIC_PATHS.has(path) || path.startsWith("/api/v1/public/")) return [];
  if (path.startsWith("/mcp")) return [{ apiKey: [] }];
  return [{ accessToken: [] }];
}

function responseSchemas(hooks: RouteLike["hooks"]): Record<string, Schema | undefined> {
  const response = hooks?.response;
  if (!response) return {};
  if (typeof (response as Schema).type === "string" || (response as Schema).anyOf) return { "200": response as Schema };
  return response as Record<string, Schema>;
}

function operationFor(route: RouteLike, path: string): Json {
  const hooks = route.hooks ?? {};
  const detail = hooks.detail ?? {};
  const secured = securityOf(path).length > 0;
  const idempotent = detail["x-idempotent"] === true;
  const hints: HeaderHints = { rateLimited: detail["x-rate-limited"] === true, sessionCookie: detail["x-session-cookie"] === true, file: typeof detail["x-media-type"] === "string" };
  const hasBody = !!hooks.body;
  const parameters: Json[] = [];
  for (const [location, schema] of [["path", hooks.params], ["query", hooks.query]] as const) {
    for (const [name, inner] of Object.entries((schema?.properties ?? {}) as Record<string, Schema>)) {
      const cleaned = plainJsonSchema(inner) as Schema;
      parameters.push({
        name,
        in: location,
        required: location === "path" || (schema?.required ?? []).includes(name),
        ...(cleaned.description ? { description: cleaned.description } : {}),
        schema: cleaned,
      });
    }
  }
  if (idempotent) parameters.push({ name: "Idempotency-Key", in: "header", required: detail["x-idempotency-required"] === true, description: "A UUID; a retry with the same key and body within 24 h replays the first response", schema: { type: "string", format: "uuid" } });

  // A route that answers a file (XML, PDF) names its media type; its success is that file.
  const fileMediaType = detail["x-media-type"] as string | undefined;
  const statuses = new Map<string, Schema | undefined>(Object.entries(responseSchemas(hooks)));
  // The error envelope for each of these statuses the route does not describe itself.
  const orError = (...codes: string[]) => {
    for (const status of codes) if (!statuses.has(status)) statuses.set(status, ERROR);
  };
  // A route that declares no response (POST /mcp answers JSON-RPC) still has its success.
  if (![...statuses.keys()].some((status) => status.startsWith("2"))) statuses.set("200", { type: "object", description: "The JSON-RPC response" });
  const extra = (detail["x-statuses"] ?? {}) as Record<string, string>;
  for (const status of Object.keys(extra)) if (!statuses.has(status)) statuses.set(status, Number(status) >= 400 ? ERROR : { type: "void" });
  // What every route can answer besides its own statuses: the edge's refusals and outages.
  orError("422", "500");
  if (path !== "/health") orError("503");
  // Any body sent to these methods goes through the JSON reader, declared or not.
  if (hasBody || ["POST", "PATCH", "PUT"].includes(route.method)) orError("400", "413", "415");
  if (secured) orError("401", "429");
  if (route.path.includes(":")) orError("404");

  const responses: Json = {};
  for (const [status, schema] of [...statuses].sort(([a], [b]) => a.localeCompare(b))) {
    const headers = responseHeaders(status, path, secured, idempotent, hints);
    const isError = Number(status) >= 400;
    const description = extra[status] ?? STATUS_TEXT[status] ?? "Response";
    const isVoid = status === "204" || (schema as Schema | undefined)?.type === "void";
    responses[status] = isVoid
      ? { description, headers }
      : fileMediaType && status.startsWith("2")
        ? { description, headers, content: { [fileMediaType]: { schema: { type: "string", format: "binary" } } } }
      : { description, headers, content: { "application/json": { schema: isError && (!schema || schema === ERROR) ? { $ref: "#/components/schemas/Error" } : withOpenObjects(plainJsonSchema(schema ?? { type: "object" })) } } };
  }

  const operation: Json = {
    operationId: operationId(route.method, path),
    summary: (detail.summary as string | undefined) ?? summaryOf(route.method, path),
    tags: (detail.tags as string[] | undefined) ?? [path.split("/")[path.startsWith("/api/v1") ? 3 : 1] ?? "service"],
    security: securityOf(path),
    responses,
  };
  if (detail.description) operation.description = detail.description;
  if (parameters.length) operation.parameters = parameters;
  if (hasBody) {
    // Closed objects say so: the service refuses a body property its schema does not declare.
    const body = withClosedObjects(plainJsonSchema(hooks.body)) as Schema;
    const opaque = !body.type && !body.anyOf && !body.properties;
    const schema = opaque ? { type: "object", description: path === "/mcp" ? "A JSON-RPC 2.0 message (MCP Streamable HTTP)" : "The tool's input (see GET /mcp/tools)" } : body;
    const example = opaque ? (path === "/mcp" ? { jsonrpc: "2.0", id: 1, method: "tools/list" } : {}) : exampleOf(body);
    operation.requestBody = { required: true, content: { "application/json": { schema, example } } };
  }
  return operation;
}

/** Builds the document from a built app's routes. */
export function buildOpenApiDocument(app: AnyElysia): Json {
  const paths: Record<string, Json> = {};
  const tags = new Set<string>();
  for (const route of app.routes as RouteLike[]) {
    if (HIDDEN.test(route.path) || route.method === "ALL" || route.method === "OPTIONS" || route.path.includes("*")) continue;
    if (route.hooks?.detail?.hide) continue;
    const path = openApiPath(route.path);
    const operation = operationFor(route, path);
    for (const tag of operation.tags as string[]) tags.add(tag);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "vet-clinic-service",
      version: pkg.version,
      description:
        "Practice management for small veterinary clinics. REST under /api/v1 (Bearer JWT), MCP under /mcp (Bearer svc_ API key). Errors use one envelope: {error, code, message, details?, request_id}.",
      license: { name: "GPL-2.0-or-later", identifier: "GPL-2.0-or-later" },
    },
    servers: [{ url: "/", description: "This server" }],
    tags: [...tags].sort().map((name) => ({ name, description: `${name[0]!.toUpperCase()}${name.slice(1)} operations` })),
    paths,
    components: {
      schemas: { Error: plainJsonSchema(ErrorEnvelope) },
      securitySchemes: {
        accessToken: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token from POST /api/v1/auth/login" },
        apiKey: { type: "http", scheme: "bearer", description: "MCP API key (svc_…) from POST /api/v1/mcp/keys" },
      },
    },
  };
}
