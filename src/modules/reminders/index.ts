import { createHmac } from "node:crypto";
import { Elysia, t } from "elysia";
import type { AppContext } from "../../context";
import { clinics } from "../../db/schema";
import { errorResponses, IdParams } from "../../http/common-model";
import { CursorPage, withDeletedAt } from "../../http/pagination";
import { safeEqual } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { eq } from "drizzle-orm";
import { getCalendarSettings } from "../clinic/calendar-settings";
import { cancelByTutor, confirmByTutor } from "../visits/service";
import type { MessageLanguage } from "./compose";
import type { LinkAction } from "./links";
import { ChannelStatusModel, CreateRuleBody, LinkQuery, ReminderListQuery, ReminderModel, RuleListQuery, RuleModel, UpdateRuleBody, WhatsAppVerifyQuery } from "./model";
import { PAGE_TEXT, tutorPage } from "./pages";
import type { ReminderRuntime } from "./runtime";
import { REMINDER_CHANNEL } from "./dispatcher";
import * as reminders from "./service";
import { whatsappEvents } from "./whatsapp-webhook";

const hidden = { detail: { hide: true } } as const;

/** Reminder rules (the owner's), the outbox's messages (every role), the tutor's links and WhatsApp's webhook. */
export const remindersModule = (context: AppContext, runtime: ReminderRuntime) => {
  const { auth, services, paginator, database } = context;
  const asTutor = () => {
    const changes = database.changeContexts.current();
    if (changes) changes.actor = { type: "system", id: null, name: "tutor (reminder link)" };
  };
  const languageOf = async (clinicId: string): Promise<MessageLanguage> => {
    const [row] = await services.db.select({ language: clinics.language }).from(clinics).where(eq(clinics.id, clinicId)).limit(1);
    return row?.language === "en" ? "en" : "es";
  };

  /** GET shows the question (mail scanners follow links; only a person's POST acts), POST acts. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- page routes: no typed client uses them
  const linkRoutes = (app: any, action: LinkAction): any =>
    app
      .get(`/public/reminders/${action}`, async ({ query }: { query: { token: string } }) => {
        const id = runtime.links.verify(action, query.token);
        const message = id ? await reminders.messageOfLink(services, id).catch(() => null) : null;
        const language = message ? await languageOf(message.clinic_id) : "es";
        const text = PAGE_TEXT[language];
        if (!message) return tutorPage(language, text[action].title, text.invalid, undefined, 404);
        return tutorPage(language, text[action].title, text[action].ask, { action: `/api/v1/public/reminders/${action}?token=${encodeURIComponent(query.token)}`, button: text[action].button });
      }, { query: LinkQuery, ...hidden })
      .post(`/public/reminders/${action}`, async ({ query }: { query: { token: string } }) => {
        const id = runtime.links.verify(action, query.token);
        const message = id ? await reminders.messageOfLink(services, id).catch(() => null) : null;
        const language = message ? await languageOf(message.clinic_id) : "es";
        const text = PAGE_TEXT[language];
        if (!message || (action !== "unsubscribe" && message.kind !== "appointment")) return tutorPage(language, text[action].title, text.invalid, undefined, 404);
        asTutor();
        try {
          if (action === "unsubscribe") await reminders.unsubscribe(services, message.id);
          else if (action === "confirm") await confirmByTutor(services, message.clinic_id, message.subject_id, message.due_at);
          else {
            // The clinic's one cancellation window, the calendar setting online bookings also obey.
            const { cancellation_window_minutes: windowMinutes } = await getCalendarSettings(services, message.clinic_id);
            await cancelByTutor(services, message.clinic_id, message.subject_id, message.due_at, windowMinutes);
          }
        } catch (error) {
          if (error instanceof AppError) return tutorPage(language, text[action].title, error.status === 404 ? text.invalid : error.message, undefined, error.status);
          throw error;
        }
        return tutorPage(language, text[action].title, text[action].done);
      }, { query: LinkQuery, ...hidden });

  const rules = new Elysia({ prefix: "/reminder-rules", tags: ["reminders"] as never })
    .use(auth)
    .guard({ auth: ["owner"] as const })
    .post("/", async ({ actor, body, status }) => {
      const created = await reminders.createRule(services, actor.clinicId, body);
      // Every instance's dispatcher plans again now, not at its next idle wake.
      await database.notify(REMINDER_CHANNEL, "");
      return status(201, created);
    }, {
      body: CreateRuleBody,
      response: { 201: RuleModel, ...errorResponses(401, 403, 422) },
      detail: { summary: "Add a reminder rule: what to remind of, how long before, on which channels in order of preference, and the quiet hours" },
    })
    .get(
      "/",
      ({ actor, query }) =>
        paginator.records(
          query,
          { keyset: reminders.ruleRecords.keyset, page: (page) => reminders.listRules(services, actor.clinicId, page), changes: reminders.ruleRecords.changes, changedSince: (since, page) => reminders.ruleChanges(services, actor.clinicId, since, page) },
          reminders.ruleView,
        ),
      {
        query: RuleListQuery,
        response: { 200: CursorPage(withDeletedAt(RuleModel)), ...errorResponses(400, 401, 403, 422) },
        detail: { summary: "The clinic's reminder rules (updated_since: the changes, removed rules included)" },
      },
    )
    .get("/:id", async ({ actor, params }) => reminders.ruleView(await reminders.ruleRecords.find(services, actor.clinicId, params.id)), { params: IdParams, response: { 200: RuleModel, ...errorResponses(401, 403, 404, 422) } })
    .patch("/:id", ({ actor, params, body }) => reminders.updateRule(services, actor.clinicId, params.id, body), {
      params: IdParams,
      body: UpdateRuleBody,
      response: { 200: RuleModel, ...errorResponses(401, 403, 404, 422) },
    })
    .delete(
      "/:id",
      async ({ actor, params, status }) => {
        await reminders.ruleRecords.softDelete(services, actor.clinicId, params.id);
        return status(204, undefined);
      },
      { params: IdParams, response: { 204: t.Void(), ...errorResponses(401, 403, 404, 422) }, detail: { summary: "Remove a rule; its queued messages are suppressed when due" } },
    );

  const messages = new Elysia({ prefix: "/reminders", tags: ["reminders"] as never })
    .use(auth)
    .guard({ auth: true })
    .get(
      "/",
      ({ actor, query }) =>
        // Newest first; delta sync answers oldest change first, as every list's does.
        paginator.records(
          query.updated_since === undefined ? { ...query, order: "desc" } : query,
          { keyset: reminders.MESSAGE_KEYSET, page: (page) => reminders.listMessages(services, actor.clinicId, query, page), changes: reminders.MESSAGE_CHANGES, changedSince: (since, page) => reminders.messageChanges(services, actor.clinicId, since, page) },
          reminders.messageView,
        ),
      {
        query: ReminderListQuery,
        response: { 200: CursorPage(withDeletedAt(ReminderModel)), ...errorResponses(400, 401, 422) },
        detail: { summary: "Reminder messages, newest first, with their state (and why one was suppressed); updated_since: those whose state changed after it" },
      },
    )
    .get("/channels", () => reminders.channelStatus(runtime.channels), {
      response: { 200: ChannelStatusModel, ...errorResponses(401) },
      detail: { summary: "Which channels this service can send on, and the settings that configure the others" },
    });

  const whatsapp = runtime.channels.whatsapp?.settings;
  const webhook = new Elysia({ prefix: "/integrations/whatsapp", tags: ["reminders"] as never })
    .get("/webhook", ({ query }) => {
      // Meta's verification handshake: echo the challenge when the verify token matches.
      if (!whatsapp?.verifyToken || query["hub.mode"] !== "subscribe" || !safeEqual(query["hub.verify_token"] ?? "", whatsapp.verifyToken)) {
        throw new AppError("FORBIDDEN", "The verify token does not match WHATSAPP_VERIFY_TOKEN");
      }
      return new Response(query["hub.challenge"] ?? "", { headers: { "content-type": "text/plain; charset=utf-8" } });
    }, { query: WhatsAppVerifyQuery, ...hidden })
    .post("/webhook", async ({ request, body }) => {
      const raw = runtime.rawBodies.get(request) ?? "";
      const signature = request.headers.get("x-hub-signature-256") ?? "";
      if (!whatsapp?.appSecret) throw new AppError("FORBIDDEN", "WHATSAPP_APP_SECRET is not set: the webhook accepts nothing");
      const expected = `sha256=${createHmac("sha256", whatsapp.appSecret).update(raw).digest("hex")}`;
      if (!safeEqual(signature, expected)) throw new AppError("FORBIDDEN", "X-Hub-Signature-256 does not match the body");
      const changes = database.changeContexts.current();
      if (changes) changes.actor = { type: "system", id: null, name: "whatsapp webhook" };
      for (const event of whatsappEvents(body)) {
        if (event.kind === "status") await reminders.recordProviderStatus(services, event);
        else if (reminders.isStopReply(event.text)) await reminders.withdrawByReply(services, event.from, `WhatsApp reply "${event.text.slice(0, 40)}" (${event.id})`);
      }
      return new Response(null, { status: 200 });
    }, hidden);

  return new Elysia({ name: "reminders" })
    .use(rules)
    .use(messages)
    .use(webhook)
    .use((["unsubscribe", "confirm", "cancel"] as const).reduce(linkRoutes, new Elysia()) as Elysia);
};
