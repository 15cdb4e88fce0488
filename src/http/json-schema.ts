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
