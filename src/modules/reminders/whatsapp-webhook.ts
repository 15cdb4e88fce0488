/**
 * What a WhatsApp Cloud API webhook notification says, as Meta's reference documents it
 * (object "whatsapp_business_account", entry[].changes[] with field "messages"): the statuses of
 * messages sent (sent, delivered, read, failed with errors[]; each with the message's
 * `biz_opaque_callback_data`, the outbox id it was sent with) and the messages tutors sent.
 */
export type WhatsAppEvent =
  | { kind: "status"; id: string; status: string; at: Date; error: string | null; callback: string | null; recipient: string | null }
  | { kind: "reply"; id: string; from: string; text: string };

interface Notification {
  object?: unknown;
  entry?: { changes?: { field?: unknown; value?: { statuses?: unknown[]; messages?: unknown[] } }[] }[];
}

const text = (value: unknown) => (typeof value === "string" ? value : null);

export function whatsappEvents(body: unknown): WhatsAppEvent[] {
  const notification = body as Notification;
  if (!notification || notification.object !== "whatsapp_business_account" || !Array.isArray(notification.entry)) return [];
  const events: WhatsAppEvent[] = [];
  for (const entry of notification.entry) {
    for (const change of Array.isArray(entry?.changes) ? entry.changes : []) {
      if (change?.field !== "messages" || !change.value) continue;
      for (const raw of Array.isArray(change.value.statuses) ? change.value.statuses : []) {
        const status = raw as { id?: unknown; status?: unknown; timestamp?: unknown; recipient_id?: unknown; biz_opaque_callback_data?: unknown; errors?: { code?: unknown; title?: unknown; message?: unknown }[] };
        const id = text(status.id);
        const state = text(status.status);
        if (!id || !state) continue;
        const seconds = Number(text(status.timestamp));
        const firstError = Array.isArray(status.errors) ? status.errors[0] : undefined;
        events.push({ kind: "status", id, status: state, at: Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : new Date(), error: firstError ? `${firstError.code ?? ""}: ${text(firstError.title) ?? text(firstError.message) ?? "failed"}` : null, callback: text(status.biz_opaque_callback_data), recipient: text(status.recipient_id) });
      }
      for (const raw of Array.isArray(change.value.messages) ? change.value.messages : []) {
        const message = raw as { id?: unknown; from?: unknown; type?: unknown; text?: { body?: unknown }; button?: { text?: unknown }; interactive?: { button_reply?: { title?: unknown } } };
        const from = text(message.from);
        const id = text(message.id) ?? "";
        const said = text(message.text?.body) ?? text(message.button?.text) ?? text(message.interactive?.button_reply?.title);
        if (from && said !== null) events.push({ kind: "reply", id, from, text: said });
      }
    }
  }
  return events;
}
