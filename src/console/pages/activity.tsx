/** @jsxImportSource preact */
import { useEffect, useState } from "preact/hooks";
import type { Page, User } from "../api";
import type { I18n, MessageKey } from "../i18n";
import { DataTable, describeError, Field, useClinic, useConsole, useLoad } from "../ui";

export interface AuditEvent {
  id: string;
  occurred_at: string;
  actor: { type: string; id: string | null; name: string | null };
  action: string;
  entity: { type: string; id: string };
  changes: Record<string, unknown>;
  request_id?: string | null;
}

/** The record types of the audit trail, in the order the filter lists them. */
const ENTITIES = ["tutor", "patient", "visit", "note", "note_addendum", "vitals", "vaccination", "prescription", "alert", "invoice", "payment", "refund", "tax_document", "user", "clinic", "sii_caf", "sii_certificate", "mcp_key", "mcp_connection", "mcp_report", "webhook"];
/** What can happen to a record; a filter on one is sent as `<entity>.<verb>` for the chosen type, or every type. */
const VERBS = ["created", "updated", "deleted", "restored", "status_changed", "emitted", "paid", "voided", "credited", "resolved", "reopened", "revoked", "role_changed", "due"];

/** Fields that say nothing to a person reading the trail (their record is the link). */
const HIDDEN_FIELDS = new Set(["id", "clinic_id", "created_at", "updated_at", "version", "search_name"]);
const MONEY_FIELDS = new Set(["amount", "unit_price", "net_amount", "tax_amount", "total_amount", "paid_amount", "balance", "refunded_amount"]);
/** A field whose values are labelled, by the group its labels live in. */
const LABELLED_FIELDS: Record<string, string> = { species: "species", sex: "sex", role: "role", method: "method", kind: "alertKind", doc_type: "docType", environment: "environment", reminder_status: "reminder" };
const STATUS_LABELS: Record<string, string> = { invoice: "invoiceStatus", visit: "visit", prescription: "prescriptionStatus" };

/** Where a record of each type is shown: its own page, its parent's (resolved by `#/records/…`), or the owner's page for it. */
export function recordHref(type: string, id: string): string | null {
  switch (type) {
    case "tutor":
      return `#/tutors/${id}`;
    case "patient":
      return `#/patients/${id}`;
    case "visit":
      return `#/visits/${id}`;
    case "invoice":
      return `#/invoices/${id}`;
    case "note":
      return `#/notes/${id}`;
    case "payment":
    case "refund":
    case "tax_document":
    case "vaccination":
    case "prescription":
    case "alert":
      return `#/records/${type}/${id}`;
    case "user":
    case "clinic":
    case "sii_caf":
    case "sii_certificate":
      return "#/settings";
    case "mcp_key":
    case "mcp_connection":
    case "mcp_report":
      return "#/mcp";
    case "webhook":
      return "#/webhooks";
    default:
      return null;
  }
}

const changeOf = (event: AuditEvent, field: string) => event.changes[field] as { from?: unknown; to?: unknown; redacted?: boolean } | undefined;

/** The record as a sentence names it: "la boleta (39) N° 12", "el paciente Luna". */
function recordName(i18n: I18n, event: AuditEvent): string {
  const value = (field: string) => {
    const change = changeOf(event, field);
    return change?.to ?? change?.from;
  };
  if (event.entity.type === "tax_document" && value("doc_type") !== undefined) return `${i18n.label("docNoun", value("doc_type") as number)} ${i18n.t("activity.number")} ${value("folio") ?? ""}`.trim();
  const entity = i18n.label("entity", event.entity.type);
  const name = value("name") ?? value("drug") ?? value("vaccine");
  return typeof name === "string" ? `${entity} ${name}` : entity;
}

/** Who did it: the person's or the assistant's name, or the system. */
function actorName(i18n: I18n, actor: AuditEvent["actor"]): string {
  if (actor.type === "system") return i18n.t("actor.system");
  return actor.name ?? i18n.label("actor", actor.type);
}

/** A value as a person reads it: money, dates, labels, kilograms. */
function shownValue(i18n: I18n, event: AuditEvent, field: string, value: unknown, clinic: { timezone: string; currency: string }): string {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "boolean") return value ? "✓" : "✗";
  if (MONEY_FIELDS.has(field) && typeof value === "number") return i18n.money(value, clinic.currency);
  if (field === "weight_grams" && typeof value === "number") return i18n.measure(value / 1000, "unit.kg", 2);
  if (field === "status" && STATUS_LABELS[event.entity.type]) return i18n.label(STATUS_LABELS[event.entity.type]!, value as string);
  if (field === "status" && event.entity.type === "alert") return String(value);
  if (LABELLED_FIELDS[field]) return i18n.label(LABELLED_FIELDS[field]!, value as string);
  if (field === "scopes" && Array.isArray(value)) return value.map((scope) => i18n.label("scope", scope as string)).join(", ");
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value)) return i18n.dateTime(value, clinic.timezone);
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)) return i18n.date(value);
  if (Array.isArray(value)) return value.map(String).join(", ");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

const fieldName = (i18n: I18n, field: string) => (i18n.has(`field.${field}`) ? i18n.t(`field.${field}` as MessageKey) : field.replace(/_/g, " "));

/** The fields that changed, before → after; sensitive ones only as "changed". */
function Changes({ event }: { event: AuditEvent }) {
  const { i18n } = useConsole();
  const clinic = useClinic();
  const fields = Object.keys(event.changes).filter((field) => !HIDDEN_FIELDS.has(field) && !field.endsWith("_id") && !field.endsWith("_by"));
  return (
    <ul class="plain changes">
      {fields.map((field) => {
        const change = changeOf(event, field);
        if (!change || typeof change !== "object") return null;
        if (change.redacted) {
          return (
            <li data-field={field}>
              {fieldName(i18n, field)}: <em>{i18n.t("activity.changed")}</em>
            </li>
          );
        }
        return (
          <li data-field={field}>
            {fieldName(i18n, field)}: {"from" in change && <>{shownValue(i18n, event, field, change.from, clinic)} → </>}
            {shownValue(i18n, event, field, change.to, clinic)}
          </li>
        );
      })}
    </ul>
  );
}

/** Events a system job wrote in one change (a seed, an import): one line for the lot. */
interface Line {
  first: AuditEvent;
  count: number;
}
function grouped(events: AuditEvent[]): Line[] {
  const lines: Line[] = [];
  for (const event of events) {
    const last = lines[lines.length - 1];
    const sameChange = last && event.actor.type === "system" && last.first.actor.type === "system" && last.first.action === event.action && (last.first.request_id ?? last.first.occurred_at.slice(0, 16)) === (event.request_id ?? event.occurred_at.slice(0, 16));
    if (sameChange) last.count++;
    else lines.push({ first: event, count: 1 });
  }
  return lines;
}

/** The audit trail in people's words: who, what (a sentence), the record, before → after; filtered from lists. */
export function ActivityPage() {
  const { api, i18n, notice } = useConsole();
  const clinic = useClinic();
  const users = useLoad(() => api.get<Page<User>>("/users", { limit: 200 }), []);
  const [filters, setFilters] = useState({ actor_id: "", entity_type: "", verb: "", date_from: "", date_to: "" });
  const [events, setEvents] = useState<AuditEvent[] | undefined>(undefined);
  const [next, setNext] = useState<string | null>(null);
  const actionFilter = () => (filters.verb ? (filters.entity_type ? [filters.entity_type] : ENTITIES).map((entity) => `${entity}.${filters.verb}`).join(",") : undefined);
  const load = async (cursor?: string) => {
    try {
      const page = await api.get<Page<AuditEvent>>("/audit", { limit: 100, actor_id: filters.actor_id, entity_type: filters.entity_type, action: actionFilter(), date_from: filters.date_from, date_to: filters.date_to, cursor });
      setEvents((shown) => (cursor ? [...(shown ?? []), ...page.data] : page.data));
      setNext(page.next_cursor ?? null);
    } catch (error) {
      notice.value = { kind: "error", ...describeError(error, i18n) };
    }
  };
  useEffect(() => void load(), [filters]);
  const set = (field: keyof typeof filters) => (e: { currentTarget: HTMLSelectElement | HTMLInputElement }) => setFilters({ ...filters, [field]: e.currentTarget.value });
  return (
    <section aria-labelledby="activity-title">
      <h1 id="activity-title">{i18n.t("activity.title")}</h1>
      <form class="card inline" data-testid="activity-filters" onSubmit={(event) => event.preventDefault()}>
        <Field label={i18n.t("activity.person")}>
          <select name="actor_id" value={filters.actor_id} onChange={set("actor_id")}>
            <option value="">{i18n.t("activity.anyone")}</option>
            {users.data?.data.map((user) => (
              <option value={user.id}>{user.name}</option>
            ))}
          </select>
        </Field>
        <Field label={i18n.t("activity.recordType")}>
          <select name="entity_type" value={filters.entity_type} onChange={set("entity_type")}>
            <option value="">{i18n.t("activity.any")}</option>
            {ENTITIES.map((entity) => (
              <option value={entity}>{capitalized(i18n.label("entityPlural", entity))}</option>
            ))}
          </select>
        </Field>
        <Field label={i18n.t("activity.action")}>
          <select name="verb" value={filters.verb} onChange={set("verb")}>
            <option value="">{i18n.t("activity.any")}</option>
            {VERBS.map((verb) => (
              <option value={verb}>{capitalized(i18n.label("verb", verb))}</option>
            ))}
          </select>
        </Field>
        <Field label={i18n.t("activity.from")}>
          <input name="date_from" type="date" value={filters.date_from} onChange={set("date_from")} />
        </Field>
        <Field label={i18n.t("activity.to")}>
          <input name="date_to" type="date" value={filters.date_to} onChange={set("date_to")} />
        </Field>
      </form>
      <DataTable
        headings={["activity.when", "activity.who", "activity.what", "activity.changes"]}
        rows={events && grouped(events)}
        testId="activity"
        row={({ first: event, count }) => {
          const verb = event.action === "tax_document.created" ? i18n.t("verb.issued") : i18n.label("verb", event.action.split(".").pop()!);
          const who = actorName(i18n, event.actor);
          const href = recordHref(event.entity.type, event.entity.id);
          const what = count > 1 ? `${count} ${i18n.label("entityPlural", event.entity.type)} ${i18n.t("activity.bulk")}` : recordName(i18n, event);
          const [before, after] = i18n.format("activity.sentence", { who, verb, entity: "\u0000" }).split("\u0000") as [string, string];
          return (
            <tr data-action={event.action} data-entity-type={event.entity.type} data-count={count}>
              <td>{i18n.dateTime(event.occurred_at, clinic.timezone)}</td>
              <td>{who}</td>
              <td>
                {before}
                {href && count === 1 ? <a href={href}>{what}</a> : what}
                {after}
              </td>
              <td>{count === 1 && <Changes event={event} />}</td>
            </tr>
          );
        }}
      />
      {events && !events.length && <p class="muted">{i18n.t("common.none")}</p>}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          {i18n.t("activity.more")}
        </button>
      )}
    </section>
  );
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** `#/records/{type}/{id}`: a record without a page of its own opens its sale's or its patient's page. */
export function RecordRedirect({ type, id }: { type: string; id: string }) {
  const { api, i18n } = useConsole();
  useLoad(async () => {
    const path: Record<string, string> = { payment: `/billing/payments/${id}`, refund: `/billing/refunds/${id}`, tax_document: `/billing/sii/documents/${id}`, vaccination: `/vaccinations/${id}`, prescription: `/prescriptions/${id}`, alert: `/alerts/${id}` };
    const record = await api.get<{ invoice_id?: string; patient_id?: string }>(path[type] ?? "/");
    location.replace(record.invoice_id ? `#/invoices/${record.invoice_id}` : record.patient_id ? `#/patients/${record.patient_id}` : "#/today");
  }, [type, id]);
  return <p aria-busy="true">{i18n.t("common.loading")}</p>;
}
