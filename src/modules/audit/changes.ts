/** A jsonb or text[] column as a driver hands it back: parsed, or as text from a raw query. */
type Stored<T> = T | string | null | undefined;

const parsed = <T>(value: Stored<T>): T | null => (typeof value === "string" ? (JSON.parse(value) as T) : (value ?? null));

/** Postgres array text (`{a,b}`) from a raw query, or the array a driver parsed. Field names need no quoting. */
const fieldList = (value: Stored<string[]>): string[] => (typeof value === "string" ? value.replace(/^\{|\}$/g, "").split(",").filter(Boolean) : (value ?? []));

/** An event's stored description of what happened, as either driver hands it back. */
export interface StoredEventFields {
  changes: Stored<Record<string, unknown>>;
  fields_before?: Stored<Record<string, unknown>>;
  fields_after?: Stored<Record<string, unknown>>;
  redacted_fields?: Stored<string[]>;
}

/**
 * What an event says changed, as the audit API shows it (webhook payloads name the fields only):
 * `{field: {from, to}}` on an update, `{field: {to}}` on creation, `{field: {redacted: true}}` for a sensitive field. The
 * trigger stores the changed fields' old and new values as two objects (cheaper to write than
 * this shape); events written otherwise (time-based events, older events) carry `changes` as is.
 */
export function eventChanges(row: StoredEventFields): Record<string, unknown> {
  const changes: Record<string, unknown> = { ...parsed(row.changes) };
  const before = parsed(row.fields_before);
  const after = parsed(row.fields_after);
  for (const [field, to] of Object.entries(after ?? {})) changes[field] = before ? { from: before[field] ?? null, to } : { to };
  for (const field of fieldList(row.redacted_fields)) changes[field] = { redacted: true };
  return changes;
}

/** The names of the fields an event changed (set, on creation), sensitive ones included by name. */
export function changedFieldNames(row: StoredEventFields): string[] {
  return [...new Set([...Object.keys(parsed(row.fields_after) ?? {}), ...Object.keys(parsed(row.changes) ?? {}), ...fieldList(row.redacted_fields)])];
}

/**
 * The values an event carries after it happened: the changed fields' new values, or a
 * time-based event's data. Sensitive fields never have one.
 */
export function eventNewValues(row: StoredEventFields): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [field, change] of Object.entries(parsed(row.changes) ?? {})) {
    // Events written before the trigger kept fields_after carry {field: {from, to}} in `changes`.
    values[field] = change !== null && typeof change === "object" && "to" in change ? (change as { to: unknown }).to : change;
  }
  return { ...values, ...parsed(row.fields_after) };
}
