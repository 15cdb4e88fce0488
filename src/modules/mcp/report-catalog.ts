import { and, asc, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { mcpReports } from "../../db/schema";
import { LruMap } from "../../lib/lru";
import { registered, type RegisteredTool } from "./registry";
import { REPORT_TOOL_PREFIX, reportTool, type ReportRow } from "./tools/saved-report";

/**
 * A clinic's saved reports as tools. They are read from the database on every list and call, so
 * a change or a deletion takes effect at once on every instance (there is no cache to tell);
 * only the compiled argument check is kept, per report version.
 */
export class ReportCatalog {
  private readonly compiled = new LruMap<string, RegisteredTool>(500);

  constructor(private readonly database: Database) {}

  async forClinic(clinicId: string): Promise<RegisteredTool[]> {
    const rows = await this.database.db.select().from(mcpReports).where(eq(mcpReports.clinic_id, clinicId)).orderBy(asc(mcpReports.name));
    return rows.map((row) => this.toolOf(row));
  }

  /** The report behind `report_<name>` in this clinic, if any. */
  async find(clinicId: string, toolName: string): Promise<RegisteredTool | undefined> {
    if (!toolName.startsWith(REPORT_TOOL_PREFIX)) return undefined;
    const name = toolName.slice(REPORT_TOOL_PREFIX.length);
    const [row] = await this.database.db.select().from(mcpReports).where(and(eq(mcpReports.clinic_id, clinicId), eq(mcpReports.name, name))).limit(1);
    return row ? this.toolOf(row) : undefined;
  }

  private toolOf(row: ReportRow): RegisteredTool {
    const key = `${row.id}:${row.version}`;
    const known = this.compiled.get(key);
    if (known) return known;
    const tool = registered(reportTool(row));
    this.compiled.set(key, tool);
    return tool;
  }
}
