type Json = Record<string, unknown>;
type Schema = Json & { anyOf?: Schema[]; type?: unknown; format?: string };

/**
 * A TypeBox schema as plain JSON Schema, for documents and clients (OpenAPI, MCP tool lists).
 * Integers that Elysia's coercion shows as anyOf [string with format "integer", integer] become
 * plain `integer` (the non-standard "integer"/"numeric" formats make strict validators warn),
 * and a model's `$id` is dropped (it would repeat wherever the model is used).
 */
export function plainJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plainJsonSchema);
  if (!schema || typeof schema !== "object") return schema;
  const source = schema as Schema;
  if (source.anyOf && source.anyOf.some((b) => b.type === "string" && (b.format === "integer" || b.format === "numeric"))) {
    const numeric = source.anyOf.find((b) => b.type === "integer" || b.type === "number");
    if (numeric) {
      const { anyOf: _drop, ...rest } = source;
      return plainJsonSchema({ ...rest, ...numeric });
    }
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === "format" && (value === "integer" || value === "numeric")) continue;
    // A model's $id would repeat wherever the model is used, which makes the document ambiguous.
    if (key === "$id") continue;
    out[key] = plainJsonSchema(value);
  }
  return out;
}

/** A tool's TypeBox schema as the plain JSON Schema its clients see (copied without TypeBox's own symbols). */
export const toolJsonSchema = (schema: object) => plainJsonSchema(JSON.parse(JSON.stringify(schema))) as { type: "object"; [k: string]: unknown };

/** The parts of JSON Schema that say which properties an object may have. */
export interface ObjectShape {
  type?: unknown;
  properties?: Record<string, ObjectShape>;
  additionalProperties?: unknown;
  patternProperties?: unknown;
  items?: ObjectShape;
  anyOf?: ObjectShape[];
  oneOf?: ObjectShape[];
  allOf?: ObjectShape[];
}

/**
 * A request body's object is closed (a property it does not declare is refused) when its schema
 * lists properties and says nothing of others, or says none; a record (`additionalProperties` or
 * `patternProperties` given) and an opaque object (no properties, as MCP's JSON-RPC body) stay open.
 */
export const isClosedObject = (schema: ObjectShape): boolean =>
  !!schema.properties && (schema.additionalProperties === undefined || schema.additionalProperties === false) && schema.patternProperties === undefined;

const branchesOf = (schema: ObjectShape): ObjectShape[] => {
  const alternatives = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  return alternatives ? alternatives.flatMap(branchesOf) : [schema];
};

/**
 * The paths of the properties `value` holds that its schema does not declare (at most `limit`),
 * through nested objects and arrays. Where branches of a union differ, a property is undeclared
 * only if no object branch declares it, so this never refuses what the schema itself accepts.
 */
export function undeclaredProperties(schema: ObjectShape, value: unknown, path: string, limit = 20, out: string[] = []): string[] {
  if (out.length >= limit || value === null || typeof value !== "object") return out;
  const branches = branchesOf(schema);
  if (Array.isArray(value)) {
    const items = branches.flatMap((branch) => (branch.items ? [branch.items] : []));
    if (items.length) value.forEach((item, index) => undeclaredProperties({ anyOf: items }, item, `${path}.${index}`, limit, out));
    return out;
  }
  const objects = branches.filter((branch) => branch.properties || branch.type === "object");
  if (!objects.length || !objects.every(isClosedObject)) return out;
  for (const [name, inner] of Object.entries(value)) {
    // Own properties only: `properties.constructor` would otherwise find Object's.
    const declared = objects.flatMap((object) => (Object.hasOwn(object.properties!, name) ? [object.properties![name]!] : []));
    if (!declared.length) out.push(`${path}.${name}`);
    else undeclaredProperties({ anyOf: declared }, inner, `${path}.${name}`, limit, out);
    if (out.length >= limit) break;
  }
  return out;
}

/** Copies a schema, passing every schema object in it (innermost first) through `change`. */
function mapSchemaObjects(schema: unknown, change: (node: Json) => Json): unknown {
  if (Array.isArray(schema)) return schema.map((item) => mapSchemaObjects(item, change));
  if (!schema || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    // `properties` maps names to schemas: a property may be called anything, `additionalProperties` too.
    out[key] = key === "properties" ? Object.fromEntries(Object.entries(value as Json).map(([name, inner]) => [name, mapSchemaObjects(inner, change)])) : mapSchemaObjects(value, change);
  }
  return change(out);
}

/** The same schema with every closed object saying so (`additionalProperties: false`), for request bodies in documents. */
export const withClosedObjects = (schema: unknown): unknown => mapSchemaObjects(schema, (node) => (isClosedObject(node as ObjectShape) ? { ...node, additionalProperties: false } : node));

/**
 * The same schema with no object closed (`additionalProperties: false` removed), for responses in
 * documents: the service may add fields to its answers, and clients must not refuse them. (Elysia
 * also writes `additionalProperties: false` into the schema objects it compiles, so without this
 * a document would depend on which routes had been compiled before it was built.)
 */
export const withOpenObjects = (schema: unknown): unknown =>
  mapSchemaObjects(schema, (node) => {
    if (node.additionalProperties !== false) return node;
    const { additionalProperties: _closed, ...open } = node;
    return open;
  });
