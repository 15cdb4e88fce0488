/** @jsxImportSource preact */
import { useEffect, useState } from "preact/hooks";
import type { Page } from "../api";
import { DataTable, Field, useClinic, useConsole } from "../ui";

export interface AuditEvent {
  id: string;
  occurred_at: string;
  actor: { type: string; id: string | null; name: string | null };
  action: string;
  entity: { type: string; id: string };
  changes: Record<string, unknown>;
}

/** Where a record of each type is shown in the console. */
const RECORD_PAGES: Record<string, string> = { tutor: "tutors", patient: "patients", invoice: "invoices" };

/** The audit trail: who did what and when, newest first, with a link to the record. */
export function ActivityPage() {
  const { api, i18n, notice } = useConsole();
  const clinic = useClinic();
  const [action, setAction] = useState("");
  const [events, setEvents] = useState<AuditEvent[] | undefined>(undefined);
  const [next, setNext] = useState<string | null>(null);
  const load = async (cursor?: string) => {
    try {
      const page = await api.get<Page<AuditEvent>>("/audit", { limit: 50, action: action.replace(/\s+/g, ""), cursor });
      setEvents((shown) => (cursor ? [...(shown ?? []), ...page.data] : page.data));
      setNext(page.next_cursor ?? null);
    } catch (error) {
      notice.value = { kind: "error", text: error instanceof Error ? error.message : String(error) };
    }
  };
  useEffect(() => void load(), []);
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title">{i18n.t("activity.title")}</h1>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void load();
        }}
      >
        <Field label={i18n.t("activity.action")}>
          <input name="action" value={action} placeholder="invoice.emitted,payment.created" onInput={(e) => setAction(e.currentTarget.value)} />
        </Field>
        <button type="submit">{i18n.t("common.search")}</button>
      </form>
      <DataTable
        headings={["activity.when", "activity.who", "activity.what", "activity.record", "activity.changes"]}
        rows={events}
        testId="activity"
        row={(event) => (
          <tr>
            <td>{i18n.dateTime(event.occurred_at, clinic.timezone)}</td>
            <td>{event.actor.name ?? (event.actor.type === "system" ? i18n.t("activity.system") : event.actor.type)}</td>
            <td>
              <code>{event.action}</code>
            </td>
            <td>{RECORD_PAGES[event.entity.type] ? <a href={`#/${RECORD_PAGES[event.entity.type]}/${event.entity.id}`}>{event.entity.type}</a> : event.entity.type}</td>
            <td>{Object.keys(event.changes).join(", ")}</td>
          </tr>
        )}
      />
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          {i18n.t("activity.more")}
        </button>
      )}
    </section>
  );
}
