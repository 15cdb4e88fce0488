/** @jsxImportSource preact */
import { useState } from "preact/hooks";
import { Field, useAction, useConsole, useLoad } from "../ui";

interface AuthorizationRequest {
  client_id: string;
  client_name: string;
  client_name_verified: boolean;
  redirect_host: string;
  redirect_scheme: string;
  loopback_only: boolean;
  requested_scopes: string[];
  scopes_supported: string[];
  default_rate_limit_per_day: number;
}

/** The signed request /authorize put in the address (`#/oauth/consent?request=…`). */
const requestFromAddress = () => new URLSearchParams(location.hash.split("?")[1] ?? "").get("request") ?? "";

/**
 * The consent page an assistant's authorization leads to: the owner sees who asks and where
 * the browser goes back, ticks the scopes (the requested ones pre-ticked), sets the daily quota,
 * and approves or denies; the browser then follows the client's redirect.
 */
export function ConsentPage() {
  const { api, i18n } = useConsole();
  const request = requestFromAddress();
  const shown = useLoad(() => api.get<AuthorizationRequest>("/mcp/authorization-requests", { request }), [request]);
  const [scopes, setScopes] = useState<string[] | null>(null);
  const [limit, setLimit] = useState<number | null>(null);
  const { busy, run } = useAction();
  const data = shown.data;
  if (!data) return <section aria-busy="true" />;
  const ticked = scopes ?? data.requested_scopes;
  const quota = limit ?? data.default_rate_limit_per_day;
  const decide = (approve: boolean) =>
    run(async () => {
      const answer = await api.post<{ redirect_to: string }>("/mcp/authorization-requests/decision", { request, approve, scopes: ticked, rate_limit_per_day: quota });
      location.assign(answer.redirect_to);
    });
  return (
    <section aria-labelledby="consent-title" class="card">
      <h1 id="consent-title">{i18n.t("consent.title")}</h1>
      <p>
        <strong data-testid="client-name">{data.client_name}</strong> {i18n.t("consent.asks")}
      </p>
      {!data.client_name_verified && (
        <p role="note" class="warning" data-testid="unverified-name">
          {i18n.t("consent.unverifiedName")}
        </p>
      )}
      <p>
        {i18n.t("consent.redirect")} <code data-testid="redirect-host">{data.redirect_host}</code>
      </p>
      <p>
        {i18n.t("consent.redirectScheme")} <code data-testid="redirect-scheme">{data.redirect_scheme}</code>
        {data.redirect_scheme !== "https" && data.redirect_scheme !== "http" && <span data-testid="app-scheme-warning"> {i18n.t("consent.appScheme")}</span>}
      </p>
      {data.loopback_only && (
        <p role="note" class="warning" data-testid="loopback-warning">
          {i18n.t("consent.loopback")}
        </p>
      )}
      <fieldset>
        <legend>{i18n.t("consent.scopes")}</legend>
        {data.scopes_supported.map((scope) => (
          <label class="check">
            <input type="checkbox" name="scope" value={scope} checked={ticked.includes(scope)} onChange={(e) => setScopes(e.currentTarget.checked ? [...ticked, scope] : ticked.filter((s) => s !== scope))} />{" "}
            <span>
              <strong>{i18n.label("scope", scope)}</strong>
              {i18n.has(`scopeWhat.${scope}`) && <span class="scope-what" data-scope={scope}> — {i18n.label("scopeWhat", scope)}</span>}
            </span>
          </label>
        ))}
      </fieldset>
      <Field label={i18n.t("mcp.dailyLimit")}>
        <input name="rate_limit_per_day" type="number" min={1} max={1000000} step={1} value={quota} onInput={(e) => setLimit(Math.trunc(Number(e.currentTarget.value)))} />
      </Field>
      {ticked.length === 0 && <p role="status">{i18n.t("consent.noScope")}</p>}
      <div class="actions">
        <button type="button" disabled={busy || ticked.length === 0} onClick={() => decide(true)}>
          {i18n.t("consent.approve")}
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => decide(false)}>
          {i18n.t("consent.deny")}
        </button>
      </div>
    </section>
  );
}
