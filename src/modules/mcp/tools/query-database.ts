import { t } from "elysia";
import { AppError } from "../../../lib/errors";
import { MAX_SQL_LENGTH } from "../sql-guard/guard";
import type { ToolDefinition } from "../registry";

export const QueryResultSchema = t.Object({
  columns: t.Array(t.Object({ name: t.String(), type: t.String() })),
  rows: t.Array(
    t.Object({}, {
      // Each row maps a column name to its value; strict clients want the values described.
      additionalProperties: t.Unsafe<unknown>({
        // One type per branch: clients that map tool schemas onto a single-`type` dialect need it.
        anyOf: ["string", "number", "boolean", "null", "object", "array"].map((type) => ({ type })),
        description: "A column's value: text (also dates, timestamps and bigints), number, boolean, null, or JSON for json columns.",
      }),
      description: "One row: column name → value, in the order of `columns`.",
    }),
  ),
  row_count: t.Integer(),
  truncated: t.Boolean(),
  elapsed_ms: t.Number(),
});

export const queryDatabaseTool = (): ToolDefinition => ({
  name: "query_database",
  title: "Query clinic data",
  description:
    "Run one read-only SQL SELECT (PostgreSQL) over this clinic's tables: tutors, patients, visits, alerts, invoices, invoice_items, payments, refunds, tax_documents, clinical_notes (signed only), note_addenda, vitals, vaccinations, prescriptions (see describe_schema). Money columns are integers in the smallest currency unit. Only allowlisted functions; no schema-qualified names.",
  scope: "query",
  inputSchema: t.Object({ sql: t.String({ minLength: 1, maxLength: MAX_SQL_LENGTH }) }, { additionalProperties: false }),
  outputSchema: QueryResultSchema,
  logText: (input) => (typeof (input as { sql?: unknown })?.sql === "string" ? (input as { sql: string }).sql : null),
  async run({ sql, key }, input: { sql: string }) {
    const guarded = sql.guard(input.sql);
    if (!guarded.ok) throw new AppError("SQL_GUARD_BLOCKED", guarded.message, { reason: guarded.reason });
    const result = await sql.run(key.clinicId, guarded);
    return { result: result as unknown as Record<string, unknown>, rowsReturned: result.row_count };
  },
});
