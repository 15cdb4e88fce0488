/** @jsxImportSource preact */
import { useState } from "preact/hooks";
import type { Page } from "../api";
import type { MessageKey } from "../i18n";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";

interface ChannelStatus {
  channel: string;
  configured: boolean;
  settings: string[];
}
interface Rule {
  id: string;
  kind: string;
  name: string;
  offset: string;
  channels: string[];
  quiet_start: string;
  quiet_end: string;
  whatsapp_template: string | null;
  enabled: boolean;
}
interface Message {
  id: string;
  kind: string;
  channel: string;
  state: string;
  suppressed_reason: string | null;
  error: string | null;
  due_at: string;
  send_at: string;
  patient_id: string;
}

const KINDS = ["vaccination_due", "appointment", "follow_up"] as const;
const STATES = ["queued", "sent", "delivered", "read", "failed", "suppressed"];
const list = (text: string) => text.split(",").map((item) => item.trim()).filter(Boolean);

/** Which channels are configured, the owner's rules, and every message with its state. */
export function RemindersPage() {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const channels = useLoad(() => api.get<{ channels: ChannelStatus[] }>("/reminders/channels"), []);
  const rules = useLoad(() => api.get<Page<Rule>>("/reminder-rules", { limit: 200 }), []);
  const [state, setState] = useState("");
  const messages = useLoad(() => api.get<Page<Message>>("/reminders", { state: state || undefined, limit: 100 }), [state]);
  const empty = { kind: "vaccination_due", name: "", offset: "-7d", channels: "email,whatsapp", quiet_start: "20:00", quiet_end: "09:00", email_subject: "", email_text: "", whatsapp_template: "", whatsapp_language: "es", whatsapp_parameters: "{tutor},{patient},{date}" };
  const [form, setForm] = useState(empty);
  const { busy, run } = useAction();
  const set = (field: keyof typeof form) => (e: { currentTarget: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement }) => setForm({ ...form, [field]: e.currentTarget.value });
  const add = (event: Event) => {
    event.preventDefault();
    const chosen = list(form.channels);
    return run(async () => {
      await api.post("/reminder-rules", {
        kind: form.kind,
        name: form.name.trim(),
        offset: form.offset.trim(),
        channels: chosen,
        quiet_start: form.quiet_start,
        quiet_end: form.quiet_end,
        email_subject: form.email_subject.trim() || null,
        email_text: form.email_text.trim() || null,
        ...(chosen.includes("whatsapp") ? { whatsapp_template: form.whatsapp_template.trim() || null, whatsapp_language: form.whatsapp_language.trim() || null, whatsapp_parameters: list(form.whatsapp_parameters) } : {}),
      });
      setForm(empty);
      rules.reload();
    }, i18n.t("common.saved"));
  };
  const toggle = (rule: Rule) => run(() => api.patch(`/reminder-rules/${rule.id}`, { enabled: !rule.enabled }), i18n.t("common.saved")).then(rules.reload);
  const remove = (rule: Rule) => run(() => api.remove(`/reminder-rules/${rule.id}`)).then(rules.reload);
  return (
    <section aria-labelledby="reminders-title">
      <h1 id="reminders-title">{i18n.t("reminders.title")}</h1>
      <h2>{i18n.t("reminders.channels")}</h2>
      <ul class="plain" data-testid="reminder-channels">
        {channels.data?.channels.map((c) => (
          <li>
            <strong>{i18n.t(`contact.channel.${c.channel}` as MessageKey)}</strong>:{" "}
            {c.configured ? i18n.t("reminders.configured") : `${i18n.t("reminders.notConfigured")} ${c.settings.join(", ")}`}
          </li>
        ))}
      </ul>
      <h2>{i18n.t("reminders.rules")}</h2>
      <DataTable
        headings={["common.name", "reminders.kind", "reminders.offset", "reminders.channelOrder", "common.status", "common.actions"]}
        rows={rules.data?.data}
        testId="reminder-rules"
        row={(rule) => (
          <tr>
            <td>{rule.name}</td>
            <td>{i18n.t(`reminders.kind.${rule.kind}` as MessageKey)}</td>
            <td>{rule.offset}</td>
            <td>{rule.channels.map((c) => i18n.t(`contact.channel.${c}` as MessageKey)).join(" → ")}</td>
            <td>{rule.enabled ? i18n.t("webhooks.enabled") : i18n.t("webhooks.disabled")}</td>
            <td>
              <button type="button" class="secondary" disabled={busy} onClick={() => toggle(rule)}>
                {rule.enabled ? i18n.t("webhooks.disable") : i18n.t("webhooks.enable")}
              </button>{" "}
              <button type="button" class="secondary" disabled={busy} onClick={() => remove(rule)}>
                {i18n.t("settings.delete")}
              </button>
            </td>
          </tr>
        )}
      />
      <form class="card" onSubmit={add} aria-label={i18n.t("reminders.addRule")}>
        <h3>{i18n.t("reminders.addRule")}</h3>
        <div class="grid">
          <Field label={i18n.t("common.name")}>
            <input name="rule_name" required maxLength={200} value={form.name} onInput={set("name")} />
          </Field>
          <Field label={i18n.t("reminders.kind")}>
            <select name="kind" value={form.kind} onChange={set("kind")}>
              {KINDS.map((kind) => (
                <option value={kind}>{i18n.t(`reminders.kind.${kind}` as MessageKey)}</option>
              ))}
            </select>
          </Field>
          <Field label={i18n.t("reminders.offset")}>
            <input name="offset" required pattern="[-+]?[0-9]{1,4}[mhd]" value={form.offset} onInput={set("offset")} />
          </Field>
          <Field label={i18n.t("reminders.channelOrder")}>
            <select name="channels" value={form.channels} onChange={set("channels")}>
              {["email,whatsapp", "whatsapp,email", "email", "whatsapp"].map((order) => (
                <option value={order}>{list(order).map((c) => i18n.t(`contact.channel.${c}` as MessageKey)).join(" → ")}</option>
              ))}
            </select>
          </Field>
          <Field label={`${i18n.t("reminders.quiet")} (${clinic.timezone})`}>
            <span>
              <input name="quiet_start" type="time" aria-label={`${i18n.t("reminders.quiet")}: 1`} value={form.quiet_start} onInput={set("quiet_start")} /> – <input name="quiet_end" type="time" aria-label={`${i18n.t("reminders.quiet")}: 2`} value={form.quiet_end} onInput={set("quiet_end")} />
            </span>
          </Field>
          <Field label={i18n.t("reminders.emailSubject")}>
            <input name="email_subject" maxLength={200} value={form.email_subject} onInput={set("email_subject")} />
          </Field>
          <Field label={i18n.t("reminders.emailText")}>
            <textarea name="email_text" maxLength={5000} value={form.email_text} onInput={set("email_text")} />
          </Field>
          {form.channels.includes("whatsapp") && (
            <>
              <Field label={i18n.t("reminders.template")}>
                <input name="whatsapp_template" required pattern="[a-z0-9_]+" value={form.whatsapp_template} onInput={set("whatsapp_template")} />
              </Field>
              <Field label={i18n.t("reminders.templateLanguage")}>
                <input name="whatsapp_language" value={form.whatsapp_language} onInput={set("whatsapp_language")} />
              </Field>
              <Field label={i18n.t("reminders.templateParameters")}>
                <input name="whatsapp_parameters" value={form.whatsapp_parameters} onInput={set("whatsapp_parameters")} />
              </Field>
            </>
          )}
        </div>
        <button type="submit" disabled={busy}>
          {i18n.t("reminders.addRule")}
        </button>
      </form>
      <h2>{i18n.t("reminders.messages")}</h2>
      <Field label={i18n.t("reminders.filterState")}>
        <select name="state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
          <option value="">{i18n.t("reminders.all")}</option>
          {STATES.map((s) => (
            <option value={s}>{s}</option>
          ))}
        </select>
      </Field>
      <MessageTable rows={messages.data?.data} />
    </section>
  );
}

/** Messages with their state and why one was not sent; shared with the patient's page. */
export function MessageTable({ rows }: { rows: Message[] | undefined }) {
  const { i18n } = useConsole();
  const clinic = useClinic();
  return (
    <DataTable
      headings={["reminders.sendAt", "reminders.kind", "reminders.dueAt", "reminders.channels", "reminders.state", "reminders.reason"]}
      rows={rows}
      testId="reminder-messages"
      row={(m) => (
        <tr>
          <td>{i18n.dateTime(m.send_at, clinic.timezone)}</td>
          <td>{i18n.t(`reminders.kind.${m.kind}` as MessageKey)}</td>
          <td>
            <a href={`#/patients/${m.patient_id}`}>{i18n.dateTime(m.due_at, clinic.timezone)}</a>
          </td>
          <td>{i18n.t(`contact.channel.${m.channel}` as MessageKey)}</td>
          <td>
            <span class={`badge ${m.state}`}>{i18n.label("reminderState", m.state)}</span>
          </td>
          <td>{m.suppressed_reason ? i18n.label("reminderReason", m.suppressed_reason) : (m.error ?? "")}</td>
        </tr>
      )}
    />
  );
}

interface ConsentState {
  channel: string;
  purpose: string;
  granted: boolean;
}
interface ConsentRecord {
  id: string;
  channel: string;
  purpose: string;
  granted: boolean;
  source: string;
  evidence: string | null;
  recorded_at: string;
}

/** The tutor form's consent section: asked in plain words, recorded per channel and purpose. */
export function ConsentSection({ tutorId }: { tutorId: string }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const consents = useLoad(() => api.get<{ current: ConsentState[]; history: ConsentRecord[] }>(`/tutors/${tutorId}/consents`), [tutorId]);
  const [evidence, setEvidence] = useState("");
  const { busy, run } = useAction();
  const record = (item: ConsentState, granted: boolean) =>
    run(() => api.post(`/tutors/${tutorId}/consents`, { channel: item.channel, purpose: item.purpose, granted, ...(evidence.trim() ? { evidence: evidence.trim() } : {}) }), i18n.t("common.saved")).then(() => {
      setEvidence("");
      consents.reload();
    });
  return (
    <section class="card" aria-labelledby="consent-title">
      <h2 id="consent-title">{i18n.t("contact.title")}</h2>
      <p>{i18n.t("contact.explain")}</p>
      <Field label={i18n.t("contact.evidence")}>
        <input name="consent_evidence" maxLength={1000} value={evidence} onInput={(e) => setEvidence(e.currentTarget.value)} />
      </Field>
      <table data-testid="consents">
        <tbody>
          {consents.data?.current.map((item) => (
            <tr>
              <th scope="row">
                {i18n.t(`contact.channel.${item.channel}` as MessageKey)} · {i18n.t(`contact.purpose.${item.purpose}` as MessageKey)}
              </th>
              <td>{item.granted ? i18n.t("contact.granted") : i18n.t("contact.notGranted")}</td>
              <td>
                {item.granted ? (
                  <button type="button" class="secondary" disabled={busy} onClick={() => record(item, false)}>
                    {i18n.t("contact.withdraw")}
                  </button>
                ) : (
                  <button type="button" disabled={busy} onClick={() => record(item, true)}>
                    {i18n.t("contact.grant")}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {Boolean(consents.data?.history.length) && (
        <details>
          <summary>{i18n.t("contact.history")}</summary>
          <ul class="plain">
            {consents.data!.history.map((h) => (
              <li>
                {i18n.dateTime(h.recorded_at, clinic.timezone)} · {i18n.t(`contact.channel.${h.channel}` as MessageKey)} · {i18n.t(`contact.purpose.${h.purpose}` as MessageKey)} · {h.granted ? i18n.t("contact.granted") : i18n.t("contact.notGranted")} · {i18n.t("contact.source")}: {h.source}
                {h.evidence ? ` · ${h.evidence}` : ""}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
