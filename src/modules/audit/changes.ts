/** A jsonb or text[] column as a driver hands it back: parsed, or as text from a raw query. */
type Stored<T> = T | string | null | undefined;

const parsed = <T>(value: Stored<T>): T | null => (typeof value === "string" ? (JSON.parse(value) as T) : (value ?? null));

/** Postgres array text (`{a,b}`) from a raw query, or the array a driver parsed. Field names need no quoting. */
const fieldList = (value: Stored<string[]>): string[] => (typeof value === "string" ? value.replace(/^\{|\}$/g, "").split(",").filter(Boolean) : (value ?? []));

/**
 * What an event says changed, as the API and webhook payloads show it: `{field: {from, to}}` on an
 * update, `{field: {to}}` on creation, `{field: {redacted: true}}` for a sensitive field. The
 * trigger stores the changed fields' old and new values as two objects (cheaper to write than
 * this shape); events written otherwise (time-based events, older events) carry `changes` as is.
 */
export function eventChanges(row: { changes: Stored<Record<string, unknown>>; fields_before?: Stored<Record<string, unknown>>; fields_after?: Stored<Record<string, unknown>>; redacted_fields?: Stored<string[]> }): Record<string, unknown> {
  const changes: Record<string, unknown> = { ...parsed(row.changes) };
  const before = parsed(row.fields_before);
  const after = parsed(row.fields_after);
  for (const [field, to] of Object.entries(after ?? {})) changes[field] = before ? { from: before[field] ?? null, to } : { to };
  for (const field of fieldList(row.redacted_fields)) changes[field] = { redacted: true };
  return changes;
}
