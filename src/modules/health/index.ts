import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";

/** Liveness and readiness (CONTRACT §1): `/ready` is false while draining or when the database is unreachable. */
export const healthModule = ({ database, lifecycle }: AppContext) =>
  new Elysia({ tags: ["operations"] as never })
    .get("/health", () => ({ status: "ok" as const }), { response: t.Object({ status: t.Literal("ok") }) })
    .get(
      "/ready",
      async ({ status }) => {
        if (lifecycle.draining) return status(503, { status: "draining" as const, database: "unknown" as const });
        try {
          await database.query("select 1");
          return { status: "ready" as const, database: "ok" as const };
        } catch {
          return status(503, { status: "unavailable" as const, database: "unreachable" as const });
        }
      },
      {
        response: {
          200: t.Object({ status: t.Literal("ready"), database: t.Literal("ok") }),
          503: t.Object({ status: t.String(), database: t.String() }),
        },
      },
    );
