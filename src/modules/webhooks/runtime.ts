import type { Config } from "../../config";
import type { Database } from "../../db/client";
import type { Clock } from "../../lib/clock";
import type { Logger } from "../../lib/logger";
import type { SecretBox } from "../../lib/secrets";
import { DestinationPolicy } from "./destination";
import { WebhookDispatcher } from "./dispatcher";
import { DueEvents } from "./due-events";
import { EventRetention } from "../audit/retention";

/** The app's webhook pieces: the destination rules, and this instance's dispatcher. */
export interface WebhookRuntime {
  destinations: DestinationPolicy;
  dispatcher: WebhookDispatcher;
  /** Each morning's due events (`vaccination.due`, `alert.due`). */
  dueEvents: DueEvents;
  /** The daily removal of events past EVENTS_RETENTION_DAYS (nothing when unset). */
  retention: EventRetention;
  /** Starts delivering, the morning's events and the retention job (the server, once migrated and listening; unless WEBHOOK_DISPATCHER=off). */
  start(): void;
  stop(): Promise<void>;
}

export function createWebhookRuntime({ database, clock, logger, config, secrets }: { database: Database; clock: Clock; logger: Logger; config: Config; secrets: SecretBox }): WebhookRuntime {
  const destinations = new DestinationPolicy(config.webhooks.allowedNetworks, config.webhooks.allowHttp);
  const dispatcher = new WebhookDispatcher({ database, clock, logger, settings: config.webhooks, secrets, destinations });
  const dueEvents = new DueEvents({ database, clock, logger }, { days: config.webhooks.dueDays, hour: config.webhooks.dueHour });
  const retention = new EventRetention({ database, clock, logger }, config.webhooks.eventsRetentionDays ?? null);
  let started: Promise<void> | undefined;
  return {
    destinations,
    dispatcher,
    dueEvents,
    retention,
    start() {
      if (!config.webhooks.dispatch || started) return;
      retention.start();
      dueEvents.start();
      started = dispatcher.start().catch((error: unknown) => logger.error("webhook dispatcher did not start", { error: error instanceof Error ? error.message : String(error) }));
    },
    async stop() {
      if (!started) return;
      dueEvents.stop();
      retention.stop();
      await started;
      await dispatcher.stop();
    },
  };
}
