import type { AppDeps } from "../../context";
import { SecretBox } from "../../lib/secrets";
import { DestinationPolicy } from "./destination";
import { WebhookDispatcher } from "./dispatcher";
import { DueEvents } from "./due-events";

/** The app's webhook pieces: the secrets' box, the destination rules, and this instance's dispatcher. */
export interface WebhookRuntime {
  secrets: SecretBox;
  destinations: DestinationPolicy;
  dispatcher: WebhookDispatcher;
  /** Each morning's `alert.due` events. */
  dueEvents: DueEvents;
}

export function createWebhookRuntime({ database, clock, logger, config }: AppDeps): WebhookRuntime {
  // The key is derived from the JWT secret, which is not in the database: changing JWT_SECRET makes stored webhook secrets unreadable (rotate them).
  const secrets = new SecretBox(config.jwtSecret, "webhook-secrets");
  const destinations = new DestinationPolicy(config.webhooks.allowedNetworks, config.webhooks.allowHttp);
  const dispatcher = new WebhookDispatcher({ database, clock, logger, settings: config.webhooks, secrets, destinations });
  const dueEvents = new DueEvents({ database, clock, logger }, { days: config.webhooks.dueDays, hour: config.webhooks.dueHour });
  return { secrets, destinations, dispatcher, dueEvents };
}
