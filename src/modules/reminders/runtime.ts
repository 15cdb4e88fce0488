import { Elysia } from "elysia";
import { NO_REMINDERS, type Config } from "../../config";
import type { Database } from "../../db/client";
import type { Clock } from "../../lib/clock";
import { AppError } from "../../lib/errors";
import type { Logger } from "../../lib/logger";
import { createChannels, type Channels } from "./channels";
import { ReminderDispatcher } from "./dispatcher";
import { ReminderLinks } from "./links";

export const WHATSAPP_WEBHOOK_PATH = "/api/v1/integrations/whatsapp/webhook";
export const LINK_PATHS = ["unsubscribe", "confirm", "cancel"].map((action) => `/api/v1/public/reminders/${action}`);

/** The app's reminder pieces: the channels this instance can send on, the tutors' links, and the outbox's dispatcher. */
export interface ReminderRuntime {
  channels: Channels;
  links: ReminderLinks;
  dispatcher: ReminderDispatcher;
  /** The WhatsApp webhook's raw bodies, which its signature covers, per request. */
  rawBodies: WeakMap<Request, string>;
  /** Starts planning and sending (the server, once migrated and listening; unless REMINDER_DISPATCHER=off). */
  start(): void;
  stop(): Promise<void>;
}

export function createReminderRuntime({ database, clock, logger, config }: { database: Database; clock: Clock; logger: Logger; config: Config }): ReminderRuntime {
  const settings = config.reminders ?? NO_REMINDERS;
  const channels = createChannels(settings);
  const links = new ReminderLinks(config.jwtSecret, () => config.publicUrl ?? `http://${config.host === "0.0.0.0" ? "localhost" : config.host}:${config.port}`);
  const dispatcher = new ReminderDispatcher({ database, clock, logger, settings, channels, links });
  let started: Promise<void> | undefined;
  return {
    channels,
    links,
    dispatcher,
    rawBodies: new WeakMap(),
    start() {
      // Without a channel there is nothing to send: no LISTEN connection, no timer.
      if (!settings.dispatch || started || (!channels.email && !channels.whatsapp)) return;
      if (settings.email && !config.publicUrl) logger.warn("PUBLIC_URL is not set: reminder e-mails link to this listener's address, which tutors may not reach");
      started = dispatcher.start().catch((error: unknown) => logger.error("reminder dispatcher did not start", { error: error instanceof Error ? error.message : String(error) }));
    },
    async stop() {
      if (started) {
        await started;
        await dispatcher.stop();
      }
      channels.email?.close();
    },
  };
}

/**
 * Keeps the WhatsApp webhook's body as it arrived (its X-Hub-Signature-256 is over those bytes)
 * and parses it as JSON; registered before the JSON reader, which answers every other route.
 */
export const whatsappWebhookBody = (rawBodies: WeakMap<Request, string>, maxBytes: number) =>
  new Elysia({ name: "whatsapp-webhook-body" }).onParse({ as: "global" }, async ({ request }) => {
    if (request.method !== "POST" || new URL(request.url).pathname !== WHATSAPP_WEBHOOK_PATH) return;
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw new AppError("PAYLOAD_TOO_LARGE", `The body exceeds ${maxBytes} bytes`);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new AppError("INVALID_JSON", "The request body is not valid UTF-8");
    }
    rawBodies.set(request, text);
    try {
      return JSON.parse(text);
    } catch {
      throw new AppError("INVALID_JSON", "The request body is not valid JSON");
    }
  });
