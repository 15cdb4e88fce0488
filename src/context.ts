import type { SecretBox } from "./lib/secrets";
import type { Config } from "./config";
import type { Database, ServiceContext } from "./db/client";
import type { authGuard } from "./http/auth";
import type { idempotency } from "./http/idempotency";
import type { DeclaredInputs } from "./http/input-rules";
import type { ApiDocument } from "./http/docs";
import type { Paginator } from "./http/pagination";
import type { RestRateLimits } from "./http/rate-limit";
import type { RequestStates } from "./http/request-context";
import type { Clock } from "./lib/clock";
import type { Logger } from "./lib/logger";
import type { McpRuntime } from "./modules/mcp/runtime";
import type { BackupScheduler } from "./backup/store";
import type { PlannerStatistics } from "./db/planner-statistics";
import type { WebhookRuntime } from "./modules/webhooks/runtime";
import type { SetupLink } from "./modules/auth/setup-link";
import type { ReminderRuntime } from "./modules/reminders/runtime";

/** What the app is built from: tests hand in their own database, clock and config. */
export interface AppDeps {
  database: Database;
  config: Config;
  clock: Clock;
  logger: Logger;
}

/** Shutdown state and the work to finish before the database closes (flushes register here). */
export interface Lifecycle {
  draining: boolean;
  onBeforeClose(task: () => Promise<void>): void;
  beforeClose(): Promise<void>;
}

export function createLifecycle(): Lifecycle {
  const tasks: (() => Promise<void>)[] = [];
  return {
    draining: false,
    onBeforeClose: (task) => void tasks.push(task),
    async beforeClose() {
      for (const task of tasks) await task();
    },
  };
}

/** What every feature module receives: the deps plus the shared per-app pieces. */
export interface AppContext extends AppDeps {
  services: ServiceContext;
  paginator: Paginator;
  rateLimits: RestRateLimits;
  requests: RequestStates;
  auth: ReturnType<typeof authGuard>;
  idempotency: ReturnType<typeof idempotency>;
  /** Which query parameters and body properties each route declares (learned from the built routes), for the unknown-input rule. */
  declaredInputs: DeclaredInputs;
  /** The OpenAPI document, built from the finished routes. */
  apiDocument: ApiDocument;
  lifecycle: Lifecycle;
  mcp: McpRuntime;
  /** Backups of the embedded database; null on PostgreSQL, whose operator backs it up. */
  backups: BackupScheduler | null;
  /** ANALYZE of stale tables; the server starts it once listening (tests call `refresh`). */
  statistics: PlannerStatistics;
  /** The one box every secret kept in the database is sealed with (SECRETS_KEY): CAF keys, the certificate's key, webhook secrets. */
  secrets: SecretBox;
  /** The first run's one-time setup token (issued at start while the install has no user). */
  setup: SetupLink;
  /** Webhook destination rules and this instance's dispatcher. */
  webhooks: WebhookRuntime;
  /** Reminder channels, the tutors' signed links, and this instance's outbox dispatcher. */
  reminders: ReminderRuntime;
}
