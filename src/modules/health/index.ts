import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { RETRY_UNAVAILABLE_AFTER_SECONDS } from "../../lib/errors";

/** Liveness and readiness: `/ready` is false while draining or when the database is unreachable. */
const UsageQueue = t.Object({
  pending: t.Integer({ description: "Usage rows waiting for the next flush" }),
  dropped: t.Integer({ description: "Usage rows lost since start (refused by the database, or past the queue bound)" }),
});

const KeyRevocation = t.Union([t.Literal("notify"), t.Literal("expiring")], {
  description:
    "How a revoked or rotated API key stops on this instance: `notify` (the instance hears the database's NOTIFY, keys are evicted at once) or `expiring` (notices do not arrive, e.g. LISTEN behind a transaction-mode pooler without DATABASE_DIRECT_URL: cached keys live at most 1 s)",
});
const Statements = t.Union([t.Literal("session"), t.Literal("pooled"), t.Literal("undecided")], {
  description:
    "How DATABASE_URL's connections are used: `session` (named prepared statements kept per connection), `pooled` (a transaction-mode pooler: unnamed statements, nothing kept between transactions), `undecided` (used as pooled until a session is proven)",
});

export const healthModule = ({ database, lifecycle, mcp }: AppContext) =>
  new Elysia({ tags: ["operations"] as never })
    .get("/health", () => ({ status: "ok" as const }), { response: t.Object({ status: t.Literal("ok") }), detail: { summary: "Liveness: the process answers" } })
    .get(
      "/ready",
      async ({ status, set }) => {
        const modes = { usage_log: { pending: mcp.usage.pending, dropped: mcp.usage.dropped }, key_revocation: mcp.keys.revocationMode, statements: database.connectionMode };
        // Its 503s say when to look again, as every other 503 does.
        const unavailable = () => {
          set.headers["retry-after"] = String(RETRY_UNAVAILABLE_AFTER_SECONDS);
        };
        if (lifecycle.draining) {
          unavailable();
          return status(503, { status: "draining" as const, database: "unknown" as const, ...modes });
        }
        try {
          await database.query("select 1");
          return { status: "ready" as const, database: "ok" as const, ...modes };
        } catch {
          unavailable();
          return status(503, { status: "unavailable" as const, database: "unreachable" as const, ...modes });
        }
      },
      {
        detail: { summary: "Readiness: the database answers and the process is not draining" },
        response: {
          200: t.Object({ status: t.Literal("ready"), database: t.Literal("ok"), usage_log: UsageQueue, key_revocation: KeyRevocation, statements: Statements }),
          503: t.Object({ status: t.String(), database: t.String(), usage_log: UsageQueue, key_revocation: KeyRevocation, statements: Statements }),
        },
      },
    );
