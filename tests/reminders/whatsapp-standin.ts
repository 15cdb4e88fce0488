import { createHmac } from "node:crypto";

/**
 * A stand-in for the WhatsApp Cloud API on 127.0.0.1 that checks every request's shape as Meta's
 * reference documents it ("Messages" reference, template messages):
 *   POST /{version}/{phone-number-id}/messages, Authorization: Bearer <token>, JSON body
 *   {messaging_product: "whatsapp", recipient_type: "individual", to: digits, type: "template",
 *    template: {name, language: {code}, components: [{type: "body", parameters: [{type: "text", text}]}]},
 *    biz_opaque_callback_data?: text up to 512 characters, returned in the message's status webhooks}
 * and answers {messaging_product, contacts: [{input, wa_id}], messages: [{id: "wamid…"}]}, or a
 * Graph API error {error: {message, type, code, fbtrace_id}} for a request of the wrong shape.
 */
export interface WhatsAppStandIn {
  apiUrl: string;
  accepted: { id: string; to: string; template: string; language: string; parameters: string[]; callback: string | null }[];
  refused: string[];
  /** Answers to give before accepting (status codes), in order. */
  failNext: number[];
  /** When each accepted message arrived (ms since the epoch), by id. */
  receivedAt: Map<string, number>;
  /** Answers wait until `release`; a request whose sender died meanwhile is not accepted. */
  hold(): void;
  /** Requests waiting on `hold`, by the sender's label (see `apiUrlFor`). */
  waiting: Map<string, number>;
  /** The API base for a sender labelled `label`, so that a test can tell senders apart. */
  apiUrlFor(label: string): string;
  release(): void;
  stop(): void;
}

const graphError = (status: number, message: string, code = 100) =>
  Response.json({ error: { message, type: "OAuthException", code, fbtrace_id: "AbCdEf" } }, { status });

export function startWhatsAppStandIn(expected: { token: string; phoneNumberId: string; version?: string }): WhatsAppStandIn {
  const version = expected.version ?? "v23.0";
  let counter = 0;
  let held: Promise<void> | null = null;
  let releaseHeld = () => {};
  const standIn: WhatsAppStandIn = {
    apiUrl: "",
    accepted: [],
    refused: [],
    failNext: [],
    receivedAt: new Map(),
    waiting: new Map(),
    apiUrlFor: (label) => standIn.apiUrl.replace(/\/[^/]+$/, `/as/${label}/${version}`),
    hold() {
      held ??= new Promise<void>((resolve) => (releaseHeld = resolve));
    },
    release() {
      releaseHeld();
      held = null;
    },
    stop: () => server.stop(true),
  };
  const refuse = (why: string) => {
    standIn.refused.push(why);
    return graphError(400, `(#100) ${why}`);
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      const sender = /^\/as\/([a-z0-9-]+)\//.exec(url.pathname)?.[1] ?? "";
      if (sender) url.pathname = url.pathname.slice(`/as/${sender}`.length);
      if (request.method !== "POST" || url.pathname !== `/${version}/${expected.phoneNumberId}/messages`) return refuse(`unexpected ${request.method} ${url.pathname}`);
      if (request.headers.get("authorization") !== `Bearer ${expected.token}`) return graphError(401, "Invalid OAuth access token", 190);
      if (!request.headers.get("content-type")?.startsWith("application/json")) return refuse("content-type must be application/json");
      const failure = standIn.failNext.shift();
      if (failure) return failure >= 500 ? graphError(failure, "Service temporarily unavailable", 2) : graphError(failure, "(#100) Invalid parameter", 100);
      let body: any;
      try {
        body = await request.json();
      } catch {
        return refuse("body is not JSON");
      }
      if (body.messaging_product !== "whatsapp") return refuse("messaging_product must be whatsapp");
      if (body.recipient_type !== undefined && body.recipient_type !== "individual") return refuse("recipient_type must be individual");
      if (typeof body.to !== "string" || !/^[0-9]{8,15}$/.test(body.to)) return refuse("to must be the phone number in international form, digits only");
      if (body.type !== "template") return refuse("only template messages may start a conversation");
      const callback = body.biz_opaque_callback_data;
      if (callback !== undefined && (typeof callback !== "string" || callback.length > 512)) return refuse("biz_opaque_callback_data must be a string of at most 512 characters");
      const template = body.template;
      if (!template || typeof template.name !== "string" || !/^[a-z0-9_]+$/.test(template.name)) return refuse("template.name is required");
      if (!template.language || typeof template.language.code !== "string") return refuse("template.language.code is required");
      const components = template.components ?? [];
      if (!Array.isArray(components)) return refuse("template.components must be an array");
      const parameters: string[] = [];
      for (const component of components) {
        if (!["header", "body", "button"].includes(component.type)) return refuse(`unknown component type ${component.type}`);
        for (const parameter of component.parameters ?? []) {
          if (parameter.type !== "text" || typeof parameter.text !== "string" || parameter.text.length === 0) return refuse("a text parameter needs a non-empty text");
          parameters.push(parameter.text);
        }
      }
      if (held) {
        standIn.waiting.set(sender, (standIn.waiting.get(sender) ?? 0) + 1);
        await held;
        standIn.waiting.set(sender, standIn.waiting.get(sender)! - 1);
      }
      if (request.signal.aborted) return graphError(503, "The sender is gone", 2);
      const id = `wamid.${(++counter).toString().padStart(8, "0")}${Math.random().toString(36).slice(2, 8)}`;
      standIn.accepted.push({ id, to: body.to, template: template.name, language: template.language.code, parameters, callback: callback ?? null });
      standIn.receivedAt.set(id, Date.now());
      return Response.json({ messaging_product: "whatsapp", contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id }] });
    },
  });
  standIn.apiUrl = `http://127.0.0.1:${server.port}/${version}`;
  return standIn;
}

/** A webhook notification as Meta sends it, and its X-Hub-Signature-256 under the app secret. */
export function signedNotification(appSecret: string, value: Record<string, unknown>) {
  const body = JSON.stringify({ object: "whatsapp_business_account", entry: [{ id: "102290129340398", changes: [{ field: "messages", value: { messaging_product: "whatsapp", metadata: { display_phone_number: "15550783881", phone_number_id: "106540352242922" }, ...value } }] }] });
  return { body, signature: `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}` };
}
