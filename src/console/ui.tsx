/** @jsxImportSource preact */
import { signal } from "@preact/signals";
import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";
import { ApiError, type Api } from "./api";
import type { I18n, MessageKey } from "./i18n";

/** One line above the page: a success or a refusal, with a link to where the refusal is fixed. */
export interface Notice {
  kind: "ok" | "error";
  text: string;
  link?: { href: string; label: string };
}

/** What every screen uses: the API client, the language, and the page's notice line. */
export interface Console {
  api: Api;
  i18n: I18n;
  notice: ReturnType<typeof signal<Notice | null>>;
}

export const ConsoleContext = createContext<Console>(null as unknown as Console);
export const useConsole = () => useContext(ConsoleContext);

/** The signed-in clinic (every screen below the shell has one). */
export function useClinic() {
  return useConsole().api.session.value!.clinic;
}

/** Refusals fixed on the settings page (the clinic's issuer data, its certificate, its CAFs). */
const FIXED_IN_SETTINGS = new Set(["issuer_data_missing", "certificate_missing", "certificate_expired", "secrets_key_mismatch", "NO_FOLIOS"]);

/** A field's name in the user's language: the last named segment of its path (`body.items.0.quantity` → quantity). */
function fieldLabel(i18n: I18n, path: string): string {
  const name = path.split(".").filter((part) => !/^\d+$/.test(part) && part !== "body" && part !== "query" && part !== "params").pop() ?? path;
  return i18n.has(`field.${name}`) ? i18n.t(`field.${name}` as MessageKey) : name.replace(/_/g, " ");
}

const listOf = (i18n: I18n, items: string[]) => new Intl.ListFormat(i18n.locale, { type: "conjunction" }).format(items);

/**
 * An API refusal in the user's language, read from its `code` and `details` (the envelope's
 * English `message` is for developers), with a link to the page where it is fixed.
 */
export function describeError(error: unknown, i18n: I18n): Omit<Notice, "kind"> {
  if (!(error instanceof ApiError)) return { text: i18n.format("error.other", { code: error instanceof Error ? error.name : "?" }) };
  const details = (error.details ?? {}) as Record<string, unknown>;
  const reason = typeof details.reason === "string" ? details.reason : undefined;
  const toSettings = reason && FIXED_IN_SETTINGS.has(reason) || FIXED_IN_SETTINGS.has(error.code) ? { href: "#/settings", label: i18n.t("error.toSettings") } : undefined;
  if (reason === "issuer_data_missing") {
    const missing = Array.isArray(details.missing) ? (details.missing as string[]) : [];
    return { text: i18n.format("error.issuer_data_missing", { fields: listOf(i18n, missing.map((field) => fieldLabel(i18n, field))) }), link: toSettings };
  }
  if (reason && i18n.has(`error.${reason}`)) return { text: i18n.t(`error.${reason}` as MessageKey), link: toSettings };
  if ("refund_needed" in details) return { text: i18n.t("error.refund_needed") };
  if ("blocked_by" in details) return { text: i18n.t("error.blocked_by") };
  if (error.code === "VALIDATION_FAILED" && error.details?.fields?.length) {
    return { text: i18n.format("error.VALIDATION_FAILED", { fields: listOf(i18n, [...new Set(error.details.fields.map((f) => fieldLabel(i18n, f.path)))]) }) };
  }
  if (error.code === "AMOUNT_EXCEEDS_BALANCE") {
    const left = Number(details.balance ?? details.refundable ?? 0);
    return { text: i18n.format("error.AMOUNT_EXCEEDS_BALANCE", { balance: new Intl.NumberFormat(i18n.locale).format(left) }) };
  }
  if (i18n.has(`error.${error.code}`)) return { text: i18n.t(`error.${error.code}` as MessageKey), link: toSettings };
  return { text: i18n.format("error.other", { code: error.code }) };
}

/** Runs an action, reporting its refusal (or a success line) in the notice area. */
export function useAction() {
  const { notice, i18n } = useConsole();
  const [busy, setBusy] = useState(false);
  const run = useCallback(
    async (action: () => Promise<unknown>, success?: string) => {
      setBusy(true);
      try {
        await action();
        notice.value = success ? { kind: "ok", text: success } : null;
        return true;
      } catch (error) {
        notice.value = { kind: "error", ...describeError(error, i18n) };
        return false;
      } finally {
        setBusy(false);
      }
    },
    [notice, i18n],
  );
  return { busy, run };
}

/** Loads on mount and whenever `deps` change; `reload` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; reload: () => void } {
  const { notice, i18n } = useConsole();
  const [data, setData] = useState<T | undefined>(undefined);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load()
      .then((value) => current && setData(value))
      .catch((error) => current && (notice.value = { kind: "error", ...describeError(error, i18n) }));
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return { data, reload: () => setRound((r) => r + 1) };
}

/** A table with its column headings and one `<tr>` per item (none while the items load). */
export function DataTable<T>(props: { headings: MessageKey[]; rows: readonly T[] | undefined; row: (item: T) => ComponentChildren; class?: string; testId?: string }) {
  const { i18n } = useConsole();
  return (
    <table class={props.class} data-testid={props.testId}>
      <thead>
        <tr>
          {props.headings.map((heading) => (
            <th scope="col">{i18n.t(heading)}</th>
          ))}
        </tr>
      </thead>
      <tbody>{props.rows?.map(props.row)}</tbody>
    </table>
  );
}

export function Field(props: { label: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
    </label>
  );
}

/** A record shown by name: what pickers and lists of people, patients and rooms hold. */
export interface Named {
  id: string;
  name: string;
}

/**
 * Search as you type (the API folds case and accents): matches appear as buttons under the
 * field; picking one fills it. `search` runs 200 ms after the last keystroke.
 */
export function SearchPicker(props: { label: string; name: string; placeholder: string; picked: Named | null; onPick: (value: Named | null) => void; search: (q: string) => Promise<Named[]> }) {
  const [query, setQuery] = useState("");
  const [matches, setMatches] = useState<Named[]>([]);
  useEffect(() => {
    if (props.picked || query.trim().length < 2) return setMatches([]);
    const timer = setTimeout(() => props.search(query.trim()).then(setMatches, () => setMatches([])), 200);
    return () => clearTimeout(timer);
  }, [query, props.picked]);
  return (
    <div>
      <Field label={props.label}>
        <input
          type="search"
          name={props.name}
          placeholder={props.placeholder}
          autocomplete="off"
          value={props.picked ? props.picked.name : query}
          onInput={(e) => {
            props.onPick(null);
            setQuery(e.currentTarget.value);
          }}
        />
      </Field>
      {matches.length > 0 && (
        <ul class="matches" aria-label={props.label}>
          {matches.map((match) => (
            <li>
              <button type="button" class="link" onClick={() => props.onPick(match)}>
                {match.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function NoticeLine() {
  const { notice } = useConsole();
  const value = notice.value;
  if (!value) return <div class="notice-slot" aria-live="polite" />;
  return (
    <div class={`notice ${value.kind}`} role={value.kind === "error" ? "alert" : "status"}>
      {value.text}
      {value.link && (
        <>
          {" "}
          <a href={value.link.href} onClick={() => (notice.value = null)}>
            {value.link.label}
          </a>
        </>
      )}
    </div>
  );
}

export function OwnerOnly(props: { children: ComponentChildren }) {
  const { api, i18n } = useConsole();
  if (api.session.value?.user.role !== "owner") return <p role="alert">{i18n.t("common.notAllowed")}</p>;
  return <>{props.children}</>;
}
