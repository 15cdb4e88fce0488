import { createTransport, type Transporter } from "nodemailer";
import type { ReminderSettings, WhatsAppSettings } from "../../config";
import type { ConsentChannel } from "../../db/schema";

/** An e-mail ready to leave: both parts already in the clinic's language. */
export interface OutgoingEmail {
  /** The outbox row's id: the Message-ID is made from it, so a receiver can tell a repeat. */
  messageId: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The signed one-click unsubscribe URL (RFC 8058). */
  unsubscribeUrl: string;
}

/** A WhatsApp template message: an approved template, its language, and its body parameters in order. */
export interface OutgoingWhatsApp {
  /** The outbox row's id, sent as `biz_opaque_callback_data`: Meta returns it with every status of the message. */
  messageId: string;
  to: string;
  template: string;
  language: string;
  parameters: string[];
}

/**
 * What a provider said: its id for the message, or why it refused (`permanent`: retrying cannot
 * help; `inDoubt`: no answer came, so the provider may have taken it).
 */
export type SendOutcome = { ok: true; providerMessageId: string } | { ok: false; error: string; permanent: boolean; inDoubt?: boolean };

/** E-mail over SMTP (nodemailer), one pooled transport per instance. */
export class EmailChannel {
  private readonly transport: Transporter;

  constructor(
    private readonly settings: NonNullable<ReminderSettings["email"]>,
    timeoutMs: number,
  ) {
    this.transport = createTransport({ url: settings.smtpUrl, pool: true, maxConnections: 4, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs } as Parameters<typeof createTransport>[0]);
  }

  async send(mail: OutgoingEmail): Promise<SendOutcome> {
    try {
      const domain = /@([^>\s]+)>?\s*$/.exec(this.settings.from)?.[1] ?? "vet-clinic.invalid";
      const info = await this.transport.sendMail({
        from: this.settings.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${mail.messageId}@${domain}>`,
        headers: { "List-Unsubscribe": `<${mail.unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
      });
      return { ok: true, providerMessageId: info.messageId };
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      // 5xx replies are the server's final word about this message (RFC 5321 §4.2.1).
      return { ok: false, error: error instanceof Error ? error.message : String(error), permanent: code !== undefined && code >= 500 };
    }
  }

  close(): void {
    this.transport.close();
  }
}

/**
 * WhatsApp Cloud API: template messages only (the one kind that may open a conversation outside
 * the 24-hour window), as POST {api}/{phone-number-id}/messages with a Bearer token.
 */
export class WhatsAppChannel {
  constructor(
    readonly settings: WhatsAppSettings,
    private readonly timeoutMs: number,
  ) {}

  async send(message: OutgoingWhatsApp): Promise<SendOutcome> {
    const body = {
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: message.to.replace(/[^0-9]/g, ""),
      biz_opaque_callback_data: message.messageId,
      type: "template",
      template: {
        name: message.template,
        language: { code: message.language },
        components: message.parameters.length ? [{ type: "body", parameters: message.parameters.map((text) => ({ type: "text", text })) }] : [],
      },
    };
    try {
      const response = await fetch(`${this.settings.apiUrl}/${encodeURIComponent(this.settings.phoneNumberId)}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.settings.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: "error",
      });
      const answer = (await response.json().catch(() => null)) as { messages?: { id?: string }[]; error?: { message?: string; code?: number } } | null;
      const id = answer?.messages?.[0]?.id;
      if (response.ok && id) return { ok: true, providerMessageId: id };
      const error = answer?.error ? `${answer.error.code ?? response.status}: ${answer.error.message ?? "refused"}` : `the API answered ${response.status}`;
      // 4xx other than throttling is a refusal of this message (bad number, unknown template).
      return { ok: false, error, permanent: response.status >= 400 && response.status < 500 && response.status !== 429 };
    } catch (error) {
      // No answer (a timeout, a dropped connection): the request may have reached Meta.
      return { ok: false, error: error instanceof Error ? error.message : String(error), permanent: false, inDoubt: true };
    }
  }
}

/** The channels this instance has settings for; a channel not configured is absent. */
export interface Channels {
  email: EmailChannel | null;
  whatsapp: WhatsAppChannel | null;
}

export function createChannels(settings: ReminderSettings): Channels {
  return {
    email: settings.email ? new EmailChannel(settings.email, settings.timeoutMs) : null,
    whatsapp: settings.whatsapp ? new WhatsAppChannel(settings.whatsapp, settings.timeoutMs) : null,
  };
}

export const configuredChannels = (channels: Channels): ConsentChannel[] => (["email", "whatsapp"] as const).filter((name) => channels[name] !== null);
