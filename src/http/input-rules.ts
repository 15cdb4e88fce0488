import { Elysia, type AnyElysia } from "elysia";
import { AppError, type FieldError } from "../lib/errors";

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

/** Which query parameters each route declares, read from the built app's own route schemas. */
export class DeclaredQueries {
  private byRoute = new Map<string, ReadonlySet<string>>();

  /** Call once the routes exist: every route without a query schema takes no parameters. */
  learn(app: AnyElysia): void {
    for (const route of app.routes) {
      const schema = route.hooks?.query as { properties?: Record<string, unknown> } | undefined;
      this.byRoute.set(`${route.method} ${route.path}`, new Set(Object.keys(schema?.properties ?? {})));
    }
  }

  unknownNames(method: string, route: string, query: Record<string, unknown> | undefined): string[] {
    const declared = this.byRoute.get(`${method} ${route}`) ?? this.byRoute.get(`ALL ${route}`);
    if (!query || !declared) return [];
    return Object.keys(query).filter((name) => !declared.has(name));
  }
}

/**
 * Input rules enforced once, before any route's schema runs: the text rule on every body,
 * query and path value (and property name), query strings that are not UTF-8, JSON nested too
 * deeply, and query parameters the route does not declare (a misspelled filter or an
 * unsupported `offset` is a 422, never silently ignored).
 */
export const inputRules = (declared: DeclaredQueries) =>
  new Elysia({ name: "input-rules" }).onTransform({ as: "global" }, (context) => {
    const { request, body, query, params } = context;
    const route = (context as { route?: string }).route ?? "";
    const fields: FieldError[] = [];
    rawQueryProblems(request.url, fields);
    if (!fields.length) collectTextProblems(query, "query", fields);
    collectTextProblems(params, "params", fields);
    collectTextProblems(body, "body", fields);
    if (fields.length) throw AppError.validation(fields, "The request holds text the service does not accept");
    const unknown = declared.unknownNames(request.method, route, query);
    if (unknown.length) {
      throw AppError.validation(
        unknown.map((name) => ({ path: `query.${name}`, message: "Unknown query parameter" })),
        `Unknown query parameter${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`,
      );
    }
  });
