/** The demo block's login table read as a person reads it: by its header, each row cut where the header's columns start. */
export function demoLogins(block: string): Record<"role" | "email" | "password" | "name", string>[] {
  const columns = ["role", "email", "password", "name"] as const;
  const lines = block.split("\n");
  const header = lines.findIndex((line) => /^\s+role\s+email\s+password\s+name$/.test(line));
  if (header < 0) throw new Error(`no login table with the columns role, email, password, name in:\n${block}`);
  const starts = columns.map((column) => lines[header]!.indexOf(column));
  const rows: Record<(typeof columns)[number], string>[] = [];
  for (const line of lines.slice(header + 1)) {
    if (!line.trim()) break;
    rows.push(Object.fromEntries(columns.map((column, i) => [column, line.slice(starts[i], starts[i + 1]).trim()])) as Record<(typeof columns)[number], string>);
  }
  return rows;
}
