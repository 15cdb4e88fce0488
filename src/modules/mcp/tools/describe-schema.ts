import { t } from "elysia";
import { FUNCTION_GROUPS } from "../sql-guard/functions";
import { READABLE_TABLES } from "../sql-guard/readable-tables";
import type { ToolDefinition } from "../registry";

const DescribeSchemaResult = t.Object({
  tables: t.Array(
    t.Object({
      name: t.String(),
      description: t.String(),
      columns: t.Array(t.Object({ name: t.String(), type: t.String(), description: t.String() })),
    }),
  ),
  functions: t.Record(t.String(), t.Object({ reason: t.String(), names: t.Array(t.String()) })),
});

/** Exactly what the guard lets through, from the same definitions the guard uses. */
export const describeSchemaTool = (): ToolDefinition => ({
  name: "describe_schema",
  title: "Describe readable tables",
  description: "The tables and columns query_database can read (this clinic's live rows only), and the SQL functions it allows.",
  scope: "read",
  inputSchema: t.Object({}, { additionalProperties: false }),
  outputSchema: DescribeSchemaResult,
  async run() {
    return { result: { tables: READABLE_TABLES, functions: FUNCTION_GROUPS } };
  },
});
