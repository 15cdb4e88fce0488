import { Elysia, type AnyElysia } from "elysia";
import { AppError, type FieldError } from "../lib/errors";
import { readableMessage } from "./errors";
import { undeclaredProperties, type ObjectShape } from "./json-schema";

/** Deeper JSON than this is refused before validation: no route's body nests past a few levels. */
const MAX_DEPTH = 32;

/**
 * The one text rule for everything that enters the service: a string holding NUL (PostgreSQL
 * text cannot store it) or a lone UTF-16 surrogate (it cannot be encoded as UTF-8, so the
 * database would silently store U+FFFD) is refused. Returns why, or null.
 */
export function textProblem(value: string): string | null {
  if (value.includes("\u0000")) return "Must not contain the NUL character (U+0000)";
  if (!value.isWellFormed()) return "Must not contain a lone surrogate (text must be valid Unicode)";
  return null;
}

function collectTextProblems(value: unknown, path: string, out: FieldError[], depth = 0): void {
  if (out.length >= 20) return;
  if (typeof value === "string") {
    const problem = textProblem(value);
    if (problem) out.push({ path, message: problem });
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (depth >= MAX_DEPTH) {
    out.push({ path, message: `Nested more than ${MAX_DEPTH} levels deep` });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => collectTextProblems(item, `${path}.${index}`, out, depth + 1));
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    const keyProblem = textProblem(key);
    if (keyProblem) out.push({ path, message: `A property name: ${keyProblem}` });
    else collectTextProblems(inner, `${path}.${key}`, out, depth + 1);
  }
}

/** The raw query string's names and values, refusing percent-encoding that is not UTF-8. */
function rawQueryProblems(url: string, out: FieldError[]): void {
  const start = url.indexOf("?");
  if (start < 0) return;
  for (const pair of url.slice(start + 1).split("&")) {
    if (!pair) continue;
    const [name = "", value = ""] = pair.split("=", 2);
    for (const [part, isName] of [[name, true], [value, false]] as const) {
      try {
        decodeURIComponent(part.replaceAll("+", " "));
      } catch {
        out.push({ path: `query.${isName ? "(name)" : safeName(name)}`, message: "Not valid UTF-8 percent-encoding" });
      }
    }
  }
}

function safeName(raw: string): string {
  try {
    const name = decodeURIComponent(raw.replaceAll("+", " "));
    return textProblem(name) ? "(name)" : name;
  } catch {
    return "(name)";
  }
}

/** A query parameter's declared schema, as much of it as the range rule reads. */
interface QuerySchema {
  type?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: QuerySchema[];
}

/** The integer bounds a query parameter declares, if it is an integer with any. */
function integerBounds(schema: QuerySchema): QuerySchema | undefined {
  const integer = schema.type === "integer" ? schema : schema.anyOf?.find((branch) => branch.type === "integer");
  return integer && (integer.minimum !== undefined || integer.maximum !== undefined) ? integer : undefined;
}

/** What each route declares it takes, read from the built app's own route schemas. */
export class DeclaredInputs {
  private queries = new Map<string, Readonly<Record<string, QuerySchema>>>();
  private bodies = new Map<string, ObjectShape>();

  /** Call once the routes exist: every route without a query schema takes no parameters. */
  learn(app: AnyElysia): void {
    for (const route of app.routes) {
      const key = `${route.method} ${route.path}`;
      const query = route.hooks?.query as { properties?: Record<string, unknown> } | undefined;
      this.queries.set(key, (query?.properties ?? {}) as Record<string, QuerySchema>);
      if (route.hooks?.body) this.bodies.set(key, route.hooks.body as ObjectShape);
    }
  }

  private lookup<T>(map: Map<string, T>, method: string, route: string): T | undefined {
    return map.get(`${method} ${route}`) ?? map.get(`ALL ${route}`);
  }

  unknownQueryNames(method: string, route: string, query: Record<string, unknown> | undefined): string[] {
    const declared = this.lookup(this.queries, method, route);
    if (!query || !declared) return [];
    return Object.keys(query).filter((name) => !Object.hasOwn(declared, name));
  }

  /**
   * Integer query values outside their declared range (`limit=500`, `offset=-1`), each named
   * `query.<name>`. The route's schema would refuse them too, but from inside Elysia's integer
   * coercion, whose error no longer knows which parameter (or even that it was the query) it
   * came from. Only values that coercion reads as integers are judged here; anything else (`abc`,
   * `1.5`, 400 digits) is left to the schema, which names its parameter itself.
   */
  queryRangeProblems(method: string, route: string, query: Record<string, unknown> | undefined): FieldError[] {
    const declared = this.lookup(this.queries, method, route);
    if (!query || !declared) return [];
    const problems: FieldError[] = [];
    for (const [name, raw] of Object.entries(query)) {
      const schema = Object.hasOwn(declared, name) ? declared[name] : undefined;
      const bounds = schema && integerBounds(schema);
      if (!bounds || typeof raw !== "string" || raw === "") continue;
      const value = Number(raw);
      if (!Number.isInteger(value)) continue;
      if ((bounds.minimum !== undefined && value < bounds.minimum) || (bounds.maximum !== undefined && value > bounds.maximum)) {
        problems.push({ path: `query.${name}`, message: readableMessage(schema, raw, "Out of range") });
      }
    }
    return problems;
  }

  /** Paths (`body.…`) of the body's properties that the route's body schema does not declare. */
  unknownBodyPaths(method: string, route: string, body: unknown): string[] {
    const schema = this.lookup(this.bodies, method, route);
    return schema ? undeclaredProperties(schema, body, "body") : [];
  }
}

const listed = (one: string, many: string, names: string[]) => `Unknown ${names.length > 1 ? many : one}: ${names.join(", ")}`;

/**
 * The refusal of undeclared properties (`body.…` paths from `undeclaredProperties`), each named
 * `Unknown property`; the message calls them what they are here: body properties, a tool's arguments.
 */
export function undeclaredPropertiesError(paths: string[], one = "body property", many = "body properties"): AppError {
  const names = paths.map((path) => path.slice("body.".length));
  return AppError.validation(paths.map((path) => ({ path, message: "Unknown property" })), listed(one, many, names));
}

/**
 * Input rules enforced once, before any route's schema runs: the text rule on every body,
 * query and path value (and property name), query strings that are not UTF-8, JSON nested too
 * deeply, and query parameters or body properties the route does not declare (a misspelled
 * filter, an unsupported `offset` or a field the route does not take is a 422, never silently
 * ignored: Elysia would otherwise drop an undeclared body property and answer as if it were accepted).
 */
export const inputRules = (declared: DeclaredInputs) =>
  new Elysia({ name: "input-rules" }).onTransform({ as: "global" }, (context) => {
    const { request, body, query, params } = context;
    const route = (context as { route?: string }).route ?? "";
    const fields: FieldError[] = [];
    rawQueryProblems(request.url, fields);
    if (!fields.length) collectTextProblems(query, "query", fields);
    collectTextProblems(params, "params", fields);
    collectTextProblems(body, "body", fields);
    if (fields.length) throw AppError.validation(fields, "The request holds text the service does not accept");
    const unknown = declared.unknownQueryNames(request.method, route, query);
    if (unknown.length) throw AppError.validation(unknown.map((name) => ({ path: `query.${name}`, message: "Unknown query parameter" })), listed("query parameter", "query parameters", unknown));
    const outOfRange = declared.queryRangeProblems(request.method, route, query);
    if (outOfRange.length) throw AppError.validation(outOfRange, "Invalid query");
    const undeclared = declared.unknownBodyPaths(request.method, route, body);
    if (undeclared.length) throw undeclaredPropertiesError(undeclared);
  });
