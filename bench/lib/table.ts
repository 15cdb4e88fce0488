/** Prints rows as a Markdown table, so the output can go into the README as it is. */
export function printTable(title: string, rows: Record<string, string | number>[]): void {
  if (!rows.length) return;
  const columns = Object.keys(rows[0]!);
  console.log(`\n### ${title}\n`);
  console.log(`| ${columns.join(" | ")} |`);
  console.log(`|${columns.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${columns.map((c) => String(row[c] ?? "")).join(" | ")} |`);
}

export const databaseLabel = () => (process.env.DATABASE_URL?.startsWith("postgres") ? "PostgreSQL" : "embedded PGlite");
