/**
 * Every response the suite receives is checked against the app's own /openapi.json: its status
 * must be documented for the operation, its required headers present, every other header it
 * carries declared (but for generic transport headers), and its JSON body valid against the
 * documented schema. A route that drifts from its document fails the test that
 * called it, with the route, status and body in the message.
 */
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Json = Record<string, any>;

interface Operation {
  template: string;
  pattern: RegExp;
  method: string;
  pointer: string;
  operation: Json;
}

/**
 * Headers any HTTP response may carry whatever the operation: framing, caching and content
 * negotiation, CORS, and the security headers set on every response. Everything else a response
 * sends is part of the operation's contract and must be declared in its `headers`.
 */
const GENERIC_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "date",
  "server",
  "vary",
  "cache-control",
  "pragma",
  "expires",
  "etag",
  "last-modified",
  "x-content-type-options",
  "x-frame-options",
  "referrer-policy",
  "content-security-policy",
  "strict-transport-security",
  "cross-origin-opener-policy",
  "cross-origin-resource-policy",
  "cross-origin-embedder-policy",
  "permissions-policy",
]);

const isGenericHeader = (name: string) => GENERIC_HEADERS.has(name.toLowerCase()) || name.toLowerCase().startsWith("access-control-");

export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ReturnType<Ajv2020["compile"]>>();

  constructor(document: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema(document, "openapi");
    const entries = Object.entries(document.paths as Record<string, Json>);
    // Static paths before templated ones, so /mcp/keys never matches /mcp/keys/{id}'s pattern first.
    entries.sort(([a], [b]) => Number(a.includes("{")) - Number(b.includes("{")));
    for (const [template, item] of entries) {
      const pattern = new RegExp(`^${template.replaceAll(/\{[^}]+\}/g, "[^/]+")}$`);
      for (const [method, operation] of Object.entries(item)) {
        const pointer = `#/paths/${template.replaceAll("~", "~0").replaceAll("/", "~1")}/${method}`;
        this.operations.push({ template, pattern, method: method.toUpperCase(), pointer, operation: operation as Json });
      }
    }
  }

  /** Why this response breaks the document, or null. Paths the document does not describe are not checked. */
  problem(method: string, url: string, status: number, headers: Headers, text: string): string | null {
    const path = new URL(url, "http://localhost").pathname.replace(/(.)\/$/, "$1");
    const found = this.operations.find((op) => op.method === method.toUpperCase() && op.pattern.test(path));
    if (!found) return null;
    const response = found.operation.responses?.[String(status)];
    const where = `${method} ${path} (${found.template})`;
    if (!response) return `${where}: status ${status} is not documented (documented: ${Object.keys(found.operation.responses ?? {}).join(", ")})`;
    for (const [name, spec] of Object.entries((response.headers ?? {}) as Json)) {
      if (spec.required && !headers.has(name)) return `${where} ${status}: header ${name} is missing`;
    }
    const documented = new Set(Object.keys(response.headers ?? {}).map((name) => name.toLowerCase()));
    const undocumented: string[] = [];
    headers.forEach((_, name) => {
      if (!documented.has(name.toLowerCase()) && !isGenericHeader(name)) undocumented.push(name);
    });
    if (undocumented.length) return `${where} ${status}: header ${undocumented.join(", ")} is sent but not documented for this response`;
    const schema = response.content?.["application/json"]?.schema;
    if (!schema) return null;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${where} ${status}: the body is not JSON`;
    }
    const key = `${found.pointer}/${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi${found.pointer}/responses/${status}/content/application~1json/schema` });
      this.validators.set(key, validate);
    }
    if (validate(body)) return null;
    return `${where} ${status}: the body does not match the document: ${this.ajv.errorsText(validate.errors)}`;
  }
}

const checkers = new WeakMap<object, ContractChecker>();

/** One checker per document (built once per app, compiled lazily per response). */
export function contractFor(document: Json): ContractChecker {
  let checker = checkers.get(document);
  if (!checker) checkers.set(document, (checker = new ContractChecker(document)));
  return checker;
}
