/** @jsxImportSource preact */
import { useState } from "preact/hooks";
import type { Page } from "../api";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";

interface Webhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
}

interface Delivery {
  id: string;
  event_type: string;
  state: string;
  attempts: number;
  status_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

interface Attempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
}

/** The owner's webhooks: add, test, rotate, enable, and see each one's deliveries. */
export function WebhooksPage() {
  const { api, i18n } = useConsole();
  const hooks = useLoad(() => api.get<Page<Webhook>>("/webhooks", { limit: 200 }), []);
  const [form, setForm] = useState({ url: "", events: "*", description: "" });
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const { busy, run } = useAction();
  const add = (event: Event) => {
    event.preventDefault();
    return run(async () => {
      const created = await api.post<Webhook & { secret: string }>("/webhooks", { url: form.url.trim(), events: form.events.split(",").map((e) => e.trim()).filter(Boolean), description: form.description || null });
      setSecret(created.secret);
      setForm({ url: "", events: "*", description: "" });
      hooks.reload();
    }, i18n.t("common.saved"));
  };
  const rotate = (hook: Webhook) => run(async () => setSecret((await api.post<{ secret: string }>(`/webhooks/${hook.id}/rotate-secret`)).secret), i18n.t("common.saved"));
  const toggle = (hook: Webhook) => run(() => api.patch(`/webhooks/${hook.id}`, { enabled: !hook.enabled }), i18n.t("common.saved")).then(hooks.reload);
  const test = (hook: Webhook) => run(() => api.post(`/webhooks/${hook.id}/test`), i18n.t("common.saved")).then(() => setOpen(hook.id));
  const remove = (hook: Webhook) => run(() => api.remove(`/webhooks/${hook.id}`)).then(hooks.reload);
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">{i18n.t("webhooks.title")}</h1>
      {secret && (
        <p class="card" role="status">
          {i18n.t("webhooks.secretOnce")} <code data-testid="webhook-secret">{secret}</code>
        </p>
      )}
      <DataTable
        headings={["webhooks.url", "webhooks.events", "webhooks.state", "common.actions"]}
        rows={hooks.data?.data}
        testId="webhooks"
        row={(hook) => (
          <tr>
            <td>
              <code>{hook.url}</code>
              {hook.description && <div>{hook.description}</div>}
            </td>
            <td>{hook.events.join(", ")}</td>
            <td>
              {hook.enabled ? i18n.t("webhooks.enabled") : i18n.t("webhooks.disabled")}
              {hook.disabled_reason && <div role="note">{hook.disabled_reason}</div>}
            </td>
            <td>
              <button type="button" class="secondary" disabled={busy} onClick={() => test(hook)}>
                {i18n.t("webhooks.test")}
              </button>{" "}
              <button type="button" class="secondary" disabled={busy} onClick={() => toggle(hook)}>
                {hook.enabled ? i18n.t("webhooks.disable") : i18n.t("webhooks.enable")}
              </button>{" "}
              <button type="button" class="secondary" disabled={busy} onClick={() => rotate(hook)}>
                {i18n.t("webhooks.rotate")}
              </button>{" "}
              <button type="button" class="secondary" onClick={() => setOpen(open === hook.id ? null : hook.id)}>
                {i18n.t("webhooks.deliveries")}
              </button>{" "}
              <button type="button" class="secondary" disabled={busy} onClick={() => remove(hook)}>
                {i18n.t("settings.delete")}
              </button>
            </td>
          </tr>
        )}
      />
      {open && <Deliveries webhookId={open} />}
      <form class="card" onSubmit={add} aria-labelledby="webhook-add-title">
        <h2 id="webhook-add-title">{i18n.t("webhooks.add")}</h2>
        <div class="grid">
          <Field label={i18n.t("webhooks.url")}>
            <input name="url" type="url" required value={form.url} placeholder="https://n8n.example.com/webhook/…" onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} />
          </Field>
          <Field label={i18n.t("webhooks.events")}>
            <input name="events" required value={form.events} onInput={(e) => setForm({ ...form, events: e.currentTarget.value })} />
          </Field>
          <Field label={i18n.t("webhooks.description")}>
            <input name="description" value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} />
          </Field>
        </div>
        <button type="submit" disabled={busy}>
          {i18n.t("common.create")}
        </button>
      </form>
    </section>
  );
}

function Deliveries({ webhookId }: { webhookId: string }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const deliveries = useLoad(() => api.get<Page<Delivery>>(`/webhooks/${webhookId}/deliveries`, { limit: 50 }), [webhookId]);
  const { busy, run } = useAction();
  const [shown, setShown] = useState<string | null>(null);
  const retry = (delivery: Delivery) => run(() => api.post(`/webhooks/deliveries/${delivery.id}/retry`), i18n.t("common.saved")).then(deliveries.reload);
  return (
    <section class="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">{i18n.t("webhooks.deliveries")}</h2>
      <DataTable
        headings={["activity.when", "webhooks.event", "webhooks.state", "webhooks.status", "webhooks.attempts", "webhooks.next", "webhooks.error", "common.actions"]}
        rows={deliveries.data?.data}
        testId="deliveries"
        row={(d) => (
          <tr>
            <td>{i18n.dateTime(d.created_at, clinic.timezone)}</td>
            <td>
              <code>{d.event_type}</code>
            </td>
            <td>{i18n.label("delivery", d.state)}</td>
            <td>{d.status_code ?? "—"}</td>
            <td>{d.attempts}</td>
            <td>{i18n.dateTime(d.next_attempt_at, clinic.timezone)}</td>
            <td>{d.error ?? ""}</td>
            <td>
              <button type="button" class="secondary" aria-expanded={shown === d.id} onClick={() => setShown(shown === d.id ? null : d.id)}>
                {i18n.t("webhooks.attemptLog")}
              </button>{" "}
              {d.state !== "pending" && (
                <button type="button" class="secondary" disabled={busy} onClick={() => retry(d)}>
                  {i18n.t("webhooks.retry")}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {shown && <AttemptLog deliveryId={shown} />}
    </section>
  );
}

/** Every attempt of one delivery, newest first: what the receiver answered, how long it took, the error. */
function AttemptLog({ deliveryId }: { deliveryId: string }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const detail = useLoad(() => api.get<Delivery & { attempt_log: Attempt[] }>(`/webhooks/deliveries/${deliveryId}/attempts`), [deliveryId]);
  return (
    <section aria-labelledby="attempts-title">
      <h3 id="attempts-title">{i18n.t("webhooks.attemptLogTitle")}</h3>
      {detail.data && detail.data.attempt_log.length === 0 && <p>{i18n.t("webhooks.noAttempts")}</p>}
      <DataTable
        headings={["webhooks.attempt", "activity.when", "webhooks.status", "webhooks.duration", "webhooks.error"]}
        rows={detail.data?.attempt_log}
        testId="attempts"
        row={(a) => (
          <tr>
            <td>{a.attempt}</td>
            <td>
              <time dateTime={a.attempted_at} title={a.attempted_at}>
                {i18n.dateTime(a.attempted_at, clinic.timezone)}
              </time>
            </td>
            <td>{a.status_code ?? i18n.t("webhooks.noAnswer")}</td>
            <td>{a.duration_ms ?? "—"}</td>
            <td>{a.error ?? ""}</td>
          </tr>
        )}
      />
    </section>
  );
}
