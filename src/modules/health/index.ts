import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";

/** Liveness and readiness: `/ready` is false while draining or when the database is unreachable. */
const UsageQueue = t.Object({
  pending: t.Integer({ description: "Usage rows waiting for the next flush" }),
  dropped: t.Integer({ description: "Usage rows lost since start (refused by the database, or past the queue bound)" }),
});

export const healthModule = ({ database, lifecycle, mcp }: AppContext) =>
  new Elysia({ tags: ["operations"] as never })
    .get("/health", () => ({ status: "ok" as const }), { response: t.Object({ status: t.Literal("ok") }), detail: { summary: "Liveness: the process answers" } })
    .get(
      "/ready",
      async ({ status }) => {
        const usage_log = { pending: mcp.usage.pending, dropped: mcp.usage.dropped };
        if (lifecycle.draining) return status(503, { status: "draining" as const, database: "unknown" as const, usage_log });
        try {
          await database.query("select 1");
          return { status: "ready" as const, database: "ok" as const, usage_log };
        } catch {
          return status(503, { status: "unavailable" as const, database: "unreachable" as const, usage_log });
        }
      },
      {
        detail: { summary: "Readiness: the database answers and the process is not draining" },
        response: {
          200: t.Object({ status: t.Literal("ready"), database: t.Literal("ok"), usage_log: UsageQueue }),
          503: t.Object({ status: t.String(), database: t.String(), usage_log: UsageQueue }),
        },
      },
    );
