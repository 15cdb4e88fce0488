import type { ReminderKind } from "../../db/schema";

export type MessageLanguage = "es" | "en";

/** The values a rule's text and template parameters may name, as `{tutor}`, `{patient}`… */
export interface MessageFacts {
  tutor: string;
  patient: string;
  clinic: string;
  /** The subject's day and time in the clinic's zone and language. */
  date: string;
  time: string;
  /** The vaccine, the visit's reason, or the follow-up's text. */
  what: string;
}

export const PLACEHOLDERS = ["tutor", "patient", "clinic", "date", "time", "what"] as const;

const DEFAULT_TEXTS: Record<MessageLanguage, Record<ReminderKind, { subject: string; text: string }>> = {
  es: {
    vaccination_due: { subject: "{patient}: vacuna por vencer", text: "Hola {tutor}: a {patient} le corresponde la vacuna {what} el {date}. Escríbanos o llámenos para agendar.\n{clinic}" },
    appointment: { subject: "Recordatorio de hora para {patient}", text: "Hola {tutor}: le recordamos la hora de {patient} el {date} a las {time}.\n{clinic}" },
    follow_up: { subject: "Control de {patient}", text: "Hola {tutor}: {patient} tiene un control pendiente el {date} ({what}).\n{clinic}" },
  },
  en: {
    vaccination_due: { subject: "{patient}: vaccination due", text: "Hello {tutor}: {patient} is due for the {what} vaccination on {date}. Write or call us to book.\n{clinic}" },
    appointment: { subject: "Appointment reminder for {patient}", text: "Hello {tutor}: this is a reminder of {patient}'s appointment on {date} at {time}.\n{clinic}" },
    follow_up: { subject: "{patient}'s follow-up", text: "Hello {tutor}: {patient} has a follow-up due on {date} ({what}).\n{clinic}" },
  },
};

const CHROME: Record<MessageLanguage, { confirm: string; cancel: string; unsubscribe: string; why: string }> = {
  es: { confirm: "Confirmar asistencia", cancel: "Anular la hora", unsubscribe: "No quiero recibir más recordatorios por correo", why: "Recibe este correo porque aceptó recordatorios de la clínica." },
  en: { confirm: "Confirm attendance", cancel: "Cancel the appointment", unsubscribe: "Stop these reminders by e-mail", why: "You receive this e-mail because you agreed to the clinic's reminders." },
};

export const fill = (template: string, facts: MessageFacts) => template.replace(/\{(tutor|patient|clinic|date|time|what)\}/g, (_, name: keyof MessageFacts) => facts[name]);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Day and time of `instant` in the clinic's zone, as its language writes them. */
export function localFacts(instant: Date, timeZone: string, language: MessageLanguage, withTime: boolean) {
  const locale = language === "es" ? "es-CL" : "en-GB";
  return {
    date: new Intl.DateTimeFormat(locale, { timeZone, weekday: "long", day: "numeric", month: "long", year: "numeric" }).format(instant),
    time: withTime ? new Intl.DateTimeFormat(locale, { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(instant) : "",
  };
}

/** The e-mail's subject and both parts: the rule's text (or the default for its kind), the visit's links, the way out. */
export function composeEmail(input: {
  kind: ReminderKind;
  language: MessageLanguage;
  subject: string | null;
  text: string | null;
  facts: MessageFacts;
  links: { unsubscribe: string; confirm?: string; cancel?: string };
}) {
  const defaults = DEFAULT_TEXTS[input.language][input.kind];
  const chrome = CHROME[input.language];
  const subject = fill(input.subject ?? defaults.subject, input.facts).replace(/[\r\n]+/g, " ");
  const body = fill(input.text ?? defaults.text, input.facts);
  const actions = [input.links.confirm ? [chrome.confirm, input.links.confirm] : null, input.links.cancel ? [chrome.cancel, input.links.cancel] : null].filter((a): a is string[] => a !== null);
  const text = [body, "", ...actions.map(([label, url]) => `${label}: ${url}`), "", `${chrome.why}`, `${chrome.unsubscribe}: ${input.links.unsubscribe}`].join("\n");
  const paragraphs = body.split(/\n+/).map((line) => `<p>${escapeHtml(line)}</p>`).join("");
  const buttons = actions.map(([label, url]) => `<p><a href="${escapeHtml(url!)}">${escapeHtml(label!)}</a></p>`).join("");
  const html = `<!doctype html><html lang="${input.language}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem">${paragraphs}${buttons}<hr><p style="font-size:small;color:#555">${escapeHtml(chrome.why)} <a href="${escapeHtml(input.links.unsubscribe)}">${escapeHtml(chrome.unsubscribe)}</a></p></body></html>`;
  return { subject, text, html };
}
