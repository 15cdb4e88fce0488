import type { MessageLanguage } from "./compose";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const PAGE_TEXT: Record<MessageLanguage, Record<"unsubscribe" | "confirm" | "cancel", { title: string; ask: string; button: string; done: string }> & { invalid: string }> = {
  es: {
    unsubscribe: { title: "Dejar de recibir recordatorios", ask: "¿Quiere dejar de recibir recordatorios de la clínica por este medio?", button: "Sí, no quiero recibir más", done: "Listo: no le enviaremos más recordatorios por este medio. Puede volver a aceptarlos en la clínica cuando quiera." },
    confirm: { title: "Confirmar asistencia", ask: "¿Confirma que asistirá a la hora?", button: "Confirmo", done: "Gracias: su hora quedó confirmada." },
    cancel: { title: "Anular la hora", ask: "¿Quiere anular la hora?", button: "Sí, anular", done: "Su hora quedó anulada." },
    invalid: "Este enlace no es válido o ya no se puede usar.",
  },
  en: {
    unsubscribe: { title: "Stop reminders", ask: "Do you want to stop receiving the clinic's reminders this way?", button: "Yes, stop them", done: "Done: we will not send you more reminders this way. You can agree to them again at the clinic at any time." },
    confirm: { title: "Confirm attendance", ask: "Do you confirm you will attend the appointment?", button: "I confirm", done: "Thank you: your appointment is confirmed." },
    cancel: { title: "Cancel the appointment", ask: "Do you want to cancel the appointment?", button: "Yes, cancel it", done: "Your appointment is cancelled." },
    invalid: "This link is not valid or can no longer be used.",
  },
};

/** A small page for the tutor's browser: a question with one button (a POST), or a result. */
export function tutorPage(language: MessageLanguage, title: string, paragraph: string, form?: { action: string; button: string }, status = 200): Response {
  const formHtml = form ? `<form method="post" action="${escapeHtml(form.action)}"><button type="submit" style="font-size:1.1rem;padding:.6rem 1.2rem">${escapeHtml(form.button)}</button></form>` : "";
  const html = `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(paragraph)}</p>${formHtml}</body></html>`;
  return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}
