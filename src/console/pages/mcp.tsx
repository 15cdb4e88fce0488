/** @jsxImportSource preact */
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Page } from "../api";
import { DataTable, Field, useAction, useClinic, useConsole, useLoad } from "../ui";

interface ApiKey {
  id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  rate_limit_per_day: number;
  last_used_at: string | null;
  revoked_at: string | null;
}
interface Connection {
  id: string;
  client_name: string;
  redirect_host: string;
  scopes: string[];
  rate_limit_per_day: number;
  last_used_at: string | null;
  revoked_at: string | null;
}
interface Summary {
  keys: { api_key_id: string; quota_used: number }[];
}
const OUTCOMES = ["ok", "blocked", "denied", "rate_limited", "error"] as const;
type Outcome = (typeof OUTCOMES)[number];
type Counts = Record<Outcome, number>;
interface Daily {
  days: ({ date: string } & Counts)[];
  tools: ({ tool: string; calls: number } & Counts)[];
}
interface UsageRow {
  id: string;
  tool: string;
  outcome: Outcome;
  reason: string | null;
  sql_text: string | null;
  created_at: string;
}
const COLORS: Record<Outcome, string> = { ok: "#2e7d32", blocked: "#e65100", denied: "#6a1b9a", rate_limited: "#8d6e00", error: "#c62828" };
const SCOPES = ["read", "query", "clinic_context"];

/** The owner's MCP page: keys (create, rotate, revoke) and what assistants did with them. */
export function McpPage() {
  const { api, i18n } = useConsole();
  const [round, setRound] = useState(0);
  const keys = useLoad(() => api.get<Page<ApiKey>>("/mcp/keys", { limit: 200 }), [round]);
  const summary = useLoad(() => api.get<Summary>("/mcp/usage/summary"), [round]);
  const [shown, setShown] = useState<{ name: string; api_key: string } | null>(null);
  const { busy, run } = useAction();
  const refresh = () => setRound((r) => r + 1);
  const quota = (id: string) => summary.data?.keys.find((k) => k.api_key_id === id)?.quota_used ?? 0;
  const rotate = (key: ApiKey) => run(async () => setShown(await api.post<{ name: string; api_key: string }>(`/mcp/keys/${key.id}/rotate`))).then(refresh);
  const revoke = (key: ApiKey) => run(() => api.remove(`/mcp/keys/${key.id}`)).then(refresh);
  return (
    <section aria-labelledby="mcp-title">
      <h1 id="mcp-title">{i18n.t("mcp.title")}</h1>
      <h2>{i18n.t("mcp.keys")}</h2>
      <PrincipalTable
        rows={keys.data?.data ?? []}
        quota={quota}
        leading={[i18n.t("common.name"), i18n.t("mcp.prefix")]}
        named={(key) => [
          key.name,
          <code>{key.key_prefix}…</code>,
        ]}
        rowAttributes={(key) => ({ "data-key-prefix": key.key_prefix })}
        ended={i18n.t("mcp.revoked")}
        actions={(key) => (
          <>
            <button type="button" class="secondary" disabled={busy} onClick={() => rotate(key)}>
              {i18n.t("mcp.rotate")} <span class="visually-hidden">{key.name}</span>
            </button>
            <button type="button" class="danger" disabled={busy} onClick={() => revoke(key)}>
              {i18n.t("mcp.revoke")} <span class="visually-hidden">{key.name}</span>
            </button>
          </>
        )}
      />
      <Connections round={round} quota={quota} onChanged={refresh} />
      {shown && <NewKeyPanel name={shown.name} apiKey={shown.api_key} />}
      <CreateKey
        onCreated={(created) => {
          setShown(created);
          refresh();
        }}
      />
      <Usage round={round} />
    </section>
  );
}

/** Assistants connected through OAuth, beside the keys: the same quota figures, and an end button. */
function Connections({ round, quota, onChanged }: { round: number; quota: (id: string) => number; onChanged: () => void }) {
  const { api, i18n } = useConsole();
  const connections = useLoad(() => api.get<Page<Connection>>("/mcp/connections", { limit: 200 }), [round]);
  const { busy, run } = useAction();
  const end = (connection: Connection) => run(() => api.remove(`/mcp/connections/${connection.id}`)).then(onChanged);
  if (!connections.data?.data.length) return null;
  return (
    <>
      <h2>{i18n.t("mcp.connections")}</h2>
      <PrincipalTable
        testId="connections"
        rows={connections.data.data}
        quota={quota}
        leading={[i18n.t("mcp.client")]}
        named={(connection) => [
          <>
            {connection.client_name} <small>({connection.redirect_host})</small>
          </>,
        ]}
        ended={i18n.t("mcp.ended")}
        actions={(connection) => (
          <button type="button" class="danger" disabled={busy} onClick={() => end(connection)}>
            {i18n.t("mcp.end")} <span class="visually-hidden">{connection.client_name}</span>
          </button>
        )}
      />
    </>
  );
}

/** What keys and OAuth connections share as principals: scopes, today's quota, last use, and an end. */
interface Principal {
  id: string;
  scopes: string[];
  rate_limit_per_day: number;
  last_used_at: string | null;
  revoked_at: string | null;
}

/**
 * A table of principals: the columns that name each kind (`leading`, `named`), then the columns
 * every principal has, then its actions, or `ended` once revoked.
 */
function PrincipalTable<T extends Principal>(props: {
  rows: T[];
  quota: (id: string) => number;
  leading: string[];
  named: (row: T) => ComponentChildren[];
  ended: string;
  actions: (row: T) => ComponentChildren;
  rowAttributes?: (row: T) => Record<string, string>;
  testId?: string;
}) {
  const { i18n } = useConsole();
  const clinic = useClinic();
  return (
    <table data-testid={props.testId}>
      <thead>
        <tr>
          {props.leading.map((header) => (
            <th scope="col">{header}</th>
          ))}
          <th scope="col">{i18n.t("mcp.scopes")}</th>
          <th scope="col" class="num">
            {i18n.t("mcp.quotaToday")}
          </th>
          <th scope="col">{i18n.t("mcp.lastUse")}</th>
          <th scope="col">{i18n.t("common.actions")}</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr {...props.rowAttributes?.(row)}>
            {props.named(row).map((cell) => (
              <td>{cell}</td>
            ))}
            <td>{row.scopes.map((scope) => i18n.label("scope", scope)).join(", ")}</td>
            <td class="num">
              {props.quota(row.id)} / {row.rate_limit_per_day}
            </td>
            <td>{row.last_used_at ? i18n.dateTime(row.last_used_at, clinic.timezone) : i18n.t("mcp.never")}</td>
            <td class="actions">{row.revoked_at ? <span class="badge void">{props.ended}</span> : props.actions(row)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CreateKey({ onCreated }: { onCreated: (key: { name: string; api_key: string }) => void }) {
  const { api, i18n } = useConsole();
  const [name, setName] = useState("Claude Desktop");
  const [scopes, setScopes] = useState<string[]>(SCOPES);
  const [limit, setLimit] = useState(1000);
  const { busy, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    return run(async () => onCreated(await api.post("/mcp/keys", { name, scopes, rate_limit_per_day: limit })));
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-key-title">
      <h2 id="new-key-title">{i18n.t("mcp.newKey")}</h2>
      <div class="grid">
        <Field label={i18n.t("common.name")}>
          <input name="key_name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label={i18n.t("mcp.dailyLimit")}>
          <input name="rate_limit_per_day" type="number" min={1} max={1000000} step={1} value={limit} onInput={(e) => setLimit(Math.trunc(Number(e.currentTarget.value)))} />
        </Field>
      </div>
      <fieldset>
        <legend>{i18n.t("mcp.scopes")}</legend>
        {SCOPES.map((scope) => (
          <label class="check">
            <input type="checkbox" checked={scopes.includes(scope)} onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))} /> {i18n.label("scope", scope)}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={busy || scopes.length === 0}>
        {i18n.t("common.create")}
      </button>
    </form>
  );
}

/** The value, once, with a copy button and a ready-to-paste Claude Desktop configuration. */
function NewKeyPanel({ name, apiKey }: { name: string; apiKey: string }) {
  const { i18n } = useConsole();
  const [copied, setCopied] = useState(false);
  const config = JSON.stringify(
    { mcpServers: { "vet-clinic": { command: "npx", args: ["mcp-remote", `${location.origin}/mcp`, "--header", "Authorization:${VET_CLINIC_KEY}"], env: { VET_CLINIC_KEY: `Bearer ${apiKey}` } } } },
    null,
    2,
  );
  return (
    <div class="card key-panel" role="status" aria-label={name}>
      <p>{i18n.t("mcp.shownOnce")}</p>
      <code class="secret" data-testid="new-api-key">
        {apiKey}
      </code>{" "}
      <button type="button" onClick={() => navigator.clipboard.writeText(apiKey).then(() => setCopied(true))}>
        {i18n.t("mcp.copy")}
      </button>
      {copied && <span> {i18n.t("mcp.copied")}</span>}
      <h3>{i18n.t("mcp.claudeConfig")}</h3>
      <pre data-testid="claude-config">{config}</pre>
    </div>
  );
}

function Usage({ round }: { round: number }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const daily = useLoad(() => api.get<Daily>("/mcp/usage/daily", { days: 30 }), [round]);
  const latest = useLoad(() => api.get<Page<UsageRow>>("/mcp/usage", { order: "desc", limit: 20 }), [round]);
  const most = Math.max(1, ...(daily.data?.tools.map((t) => t.calls) ?? []));
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">{i18n.t("mcp.usage")}</h2>
      <h3>{i18n.t("mcp.perDay")}</h3>
      {daily.data && <DailyChart days={daily.data.days} />}
      <ul class="legend" aria-hidden="true">
        {OUTCOMES.map((o) => (
          <li>
            <span class="swatch" style={{ background: COLORS[o] }} /> {i18n.label("outcome", o)}
          </li>
        ))}
      </ul>
      <details>
        <summary>{i18n.t("mcp.perDay")}</summary>
        <table data-testid="usage-per-day">
          <thead>
            <tr>
              <th scope="col">{i18n.t("common.date")}</th>
              {OUTCOMES.map((o) => (
                <th scope="col" class="num">
                  {i18n.label("outcome", o)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {daily.data?.days.map((day) => (
              <tr data-date={day.date}>
                <th scope="row">{i18n.date(day.date)}</th>
                {OUTCOMES.map((o) => (
                  <td class="num" data-outcome={o}>
                    {day[o]}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <h3>{i18n.t("mcp.byTool")}</h3>
      <ul class="bars" data-testid="usage-by-tool">
        {daily.data?.tools.map((tool) => (
          <li data-tool={tool.tool}>
            <code class="bar-label">{tool.tool}</code>
            <span class="bar" style={{ width: `${(tool.calls / most) * 100}%` }} aria-hidden="true" />
            <span class="bar-value">{tool.calls}</span>
          </li>
        ))}
      </ul>
      <h3>{i18n.t("mcp.latest")}</h3>
      <DataTable testId="latest-calls" headings={["common.date", "mcp.tool", "mcp.outcome", "mcp.reason", "mcp.sql"]} rows={latest.data?.data} row={(row) => (
        <tr>
          <td>{i18n.dateTime(row.created_at, clinic.timezone)}</td>
          <td>
            <code>{row.tool}</code>
          </td>
          <td>
            <span class={`badge outcome-${row.outcome}`}>{i18n.label("outcome", row.outcome)}</span>
          </td>
          <td>{row.reason && <code>{row.reason}</code>}</td>
          <td>{row.sql_text && <code class="sql">{row.sql_text}</code>}</td>
        </tr>
      )} />
    </section>
  );
}

/** Calls per day stacked by outcome: each series is the running sum, drawn tallest first. */
function DailyChart({ days }: { days: Daily["days"] }) {
  const { i18n } = useConsole();
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const x = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const stacked = OUTCOMES.map((_, i) => days.map((d) => OUTCOMES.slice(0, i + 1).reduce((sum, o) => sum + d[o], 0)));
    const order = [...OUTCOMES.keys()].reverse();
    const bars = uPlot.paths.bars!({ size: [0.7, 40] });
    const chart = new uPlot(
      {
        width: Math.max(320, host.current!.clientWidth),
        height: 220,
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{ label: i18n.t("chart.dayUtc") }, { label: i18n.t("chart.calls") }],
        series: [{}, ...order.map((i) => ({ label: i18n.label("outcome", OUTCOMES[i]!), fill: COLORS[OUTCOMES[i]!], stroke: COLORS[OUTCOMES[i]!], paths: bars, points: { show: false } }))],
      },
      [x, ...order.map((i) => stacked[i]!)],
      host.current!,
    );
    return () => chart.destroy();
  }, [days, i18n.language.value]);
  return <div ref={host} class="chart" role="img" aria-label={i18n.t("mcp.perDay")} />;
}
