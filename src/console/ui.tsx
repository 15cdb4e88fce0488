/** @jsxImportSource preact */
import { signal } from "@preact/signals";
import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";
import { ApiError, type Api } from "./api";
import type { I18n, MessageKey } from "./i18n";

/** What every screen uses: the API client, the language, and the page's notice line. */
export interface Console {
  api: Api;
  i18n: I18n;
  notice: ReturnType<typeof signal<{ kind: "ok" | "error"; text: string } | null>>;
}

export const ConsoleContext = createContext<Console>(null as unknown as Console);
export const useConsole = () => useContext(ConsoleContext);

/** The signed-in clinic (every screen below the shell has one). */
export function useClinic() {
  return useConsole().api.session.value!.clinic;
}

/** An API refusal as one sentence, with the fields it names. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = error.details?.fields?.map((f) => `${f.path.replace(/^body\./, "")}: ${f.message}`).join("; ");
    return fields ? `${error.message} (${fields})` : error.message;
  }
  return String(error);
}

/** Runs an action, reporting its refusal (or a success line) in the notice area. */
export function useAction() {
  const { notice } = useConsole();
  const [busy, setBusy] = useState(false);
  const run = useCallback(
    async (action: () => Promise<unknown>, success?: string) => {
      setBusy(true);
      try {
        await action();
        notice.value = success ? { kind: "ok", text: success } : null;
        return true;
      } catch (error) {
        notice.value = { kind: "error", text: describeError(error) };
        return false;
      } finally {
        setBusy(false);
      }
    },
    [notice],
  );
  return { busy, run };
}

/** Loads on mount and whenever `deps` change; `reload` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; reload: () => void } {
  const { notice } = useConsole();
  const [data, setData] = useState<T | undefined>(undefined);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load()
      .then((value) => current && setData(value))
      .catch((error) => current && (notice.value = { kind: "error", text: describeError(error) }));
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

export function NoticeLine() {
  const { notice } = useConsole();
  const value = notice.value;
  if (!value) return <div class="notice-slot" aria-live="polite" />;
  return (
    <div class={`notice ${value.kind}`} role={value.kind === "error" ? "alert" : "status"}>
      {value.text}
    </div>
  );
}

export function OwnerOnly(props: { children: ComponentChildren }) {
  const { api, i18n } = useConsole();
  if (api.session.value?.user.role !== "owner") return <p role="alert">{i18n.t("common.notAllowed")}</p>;
  return <>{props.children}</>;
}
