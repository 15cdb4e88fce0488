import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { CreateReportBody, ReportListQuery, ReportModel, ReportTemplateModel, UpdateReportBody } from "./model";
import * as reports from "./service";
import { reportTemplates } from "./templates";


/** Saved reports, the clinic's own MCP tools: the owner's alone, like the keys. */
export const mcpReportsModule = ({ auth, services, paginator, database, mcp }: AppContext) => {
  // Reports are planned under the limits they will run with: the MCP engine's.
  const ctx: reports.ReportServiceContext = { ...services, database, queryLimits: mcp.sql.limits };
  return new Elysia({ prefix: "/mcp", tags: ["mcp reports"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .post("/reports", async ({ actor, body, status }) => status(201, await reports.createReport(ctx, actor.clinicId, actor.userId, body)), {
      body: CreateReportBody,
      response: { 201: ReportModel, ...errorResponses(400, 401, 403, 409, 422) },
      detail: { summary: "Save a report; it becomes the MCP tool report_<name> at once", "x-statuses": { "400": "SQL_GUARD_BLOCKED: the SQL is refused as query_database would refuse it" } },
    })
    .get(
      "/reports",
      ({ actor, query }) =>
        paginator.records(query, { keyset: reports.REPORT_KEYSET, page: (page) => reports.listReports(ctx, actor.clinicId, page), changes: reports.REPORT_CHANGES, changedSince: (since, page) => reports.reportChanges(ctx, actor.clinicId, since, page) }, reports.reportView),
      { query: ReportListQuery, response: { 200: CursorPage(withDeletedAt(ReportModel)), ...errorResponses(400, 401, 403, 422) } },
    )
    .get("/reports/templates", ({ actor }) => ({ templates: reportTemplates(actor.clinic.timezone) }), {
      response: { 200: t.Object({ templates: t.Array(ReportTemplateModel) }), ...errorResponses(401, 403) },
      detail: { summary: "Starter reports, in the clinic's time zone, ready to POST to /mcp/reports" },
    })
    .get("/reports/:id", ({ actor, params }) => reports.getReport(ctx, actor.clinicId, params.id), {
      params: IdParams,
      response: { 200: ReportModel, ...errorResponses(401, 403, 404, 422) },
    })
    .patch("/reports/:id", ({ actor, params, body }) => reports.updateReport(ctx, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateReportBody,
      response: { 200: ReportModel, ...errorResponses(400, 401, 403, 404, 409, 422) },
      detail: { summary: "Change a report (checked again as a whole); its version goes up by one" },
    })
    .delete(
      "/reports/:id",
      async ({ actor, params, status }) => {
        await reports.deleteReport(ctx, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) }, detail: { summary: "Delete a report; its tool is gone at once" } },
    );
};
