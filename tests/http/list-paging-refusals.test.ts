/**
 * Every list route, found in the app's own OpenAPI document (each operation that takes a `limit`
 * query parameter), refuses each bad `limit` and `offset` with a 422 naming the parameter as
 * `query.limit` / `query.offset` and saying what it accepts, and writes nothing; so does every
 * other bounded integer query parameter (`days`). New lists and parameters join without edits.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Refusal, TestApp, ValidationDetails } from "../helpers/app";
import type { ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { createKey } from "../mcp/helpers";

const ZERO_UUID = "00000000-0000-7000-8000-000000000000";

interface Parameter {
  name: string;
  in: string;
  schema?: { minimum?: number; maximum?: number; anyOf?: { type?: string; minimum?: number; maximum?: number }[]; type?: string };
}

interface ListRoute {
  path: string;
  template: string;
  /** The bounded integer query parameters the route declares (`limit`, `offset`, …), with their documented bounds. */
  paging: { name: string; minimum: number; maximum: number }[];
}

let t: TestApp;
let owner: ClinicSession;
let mcpKey: string;
let lists: ListRoute[];

useClinicApp((made) => ({ t, owner } = made));
beforeAll(async () => {
  mcpKey = (await createKey(owner)).api_key;
  const document = t.context.apiDocument.json as { paths: Record<string, Record<string, { parameters?: Parameter[] }>> };
  lists = [];
  for (const [template, item] of Object.entries(document.paths)) {
    const parameters = item.get?.parameters ?? [];
    const paging = parameters
      .filter((p) => p.in === "query")
      .map((p) => ({ name: p.name, integer: p.schema?.type === "integer" ? p.schema : p.schema?.anyOf?.find((branch) => branch.type === "integer") }))
      .filter(({ name, integer }) => name === "limit" || name === "offset" || (integer?.minimum !== undefined && integer.maximum !== undefined))
      .map(({ name, integer }) => ({ name, minimum: integer?.minimum ?? NaN, maximum: integer?.maximum ?? NaN }));
    if (!paging.length) continue;
    lists.push({ template, path: template.replaceAll(/\{[^}]+\}/g, ZERO_UUID), paging });
  }
});

/** Every row of every table of the service, so "writes nothing" covers tables a test forgets. */
async function totalRows(): Promise<number> {
  const tables = await t.database.query<{ name: string }>(
    "select quote_ident(tablename) as name from pg_tables where schemaname = 'public' and tablename not like '%drizzle%'",
  );
  const [row] = await t.database.query<{ n: string | number }>(`select (${tables.map((x) => `(select count(*) from ${x.name})`).join(" + ")}) as n`);
  return Number(row!.n);
}

/** The values each paging parameter must refuse: out of range both ways, not an integer, negative, 400 digits. */
function badValues(bounds: { minimum: number; maximum: number }): [string, string][] {
  return [
    ["one past the maximum", String(bounds.maximum + 1)],
    ["500 times the maximum", String(bounds.maximum * 500)],
    ["one below the minimum", String(bounds.minimum - 1)],
    ["-1", "-1"],
    ["an exponent past the maximum", `${bounds.maximum}e3`],
    ["1.5", "1.5"],
    ["a word", "abc"],
    ["empty", ""],
    ["400 digits", "9".repeat(400)],
    ["minus 400 digits", `-${"9".repeat(400)}`],
  ];
}

describe("every list refuses bad paging values, naming the parameter", () => {
  test("the lists are found in the document, with documented bounds", () => {
    expect(lists.filter((l) => l.paging.some((p) => p.name === "limit")).length, lists.map((l) => l.template).join(", ")).toBeGreaterThanOrEqual(10);
    for (const list of lists) {
      for (const p of list.paging) expect(Number.isInteger(p.minimum) && Number.isInteger(p.maximum), `${list.template} ${p.name}`).toBe(true);
    }
    expect(lists.some((l) => l.paging.some((p) => p.name === "offset"))).toBe(true);
  });

  test("limit, offset and the other bounded integers, each bad value: 422 VALIDATION_FAILED naming query.<name> with its range, writing nothing", async () => {
    const before = await totalRows();
    let cases = 0;
    for (const list of lists) {
      const token = list.path.startsWith("/mcp") ? mcpKey : owner.token;
      for (const parameter of list.paging) {
        const expected = { path: `query.${parameter.name}`, message: `Must be an integer from ${parameter.minimum} to ${parameter.maximum}` };
        for (const [label, value] of badValues(parameter)) {
          const r = await t.request<Refusal<ValidationDetails>>("GET", `${list.path}?${parameter.name}=${value}`, { token });
          const shown = `GET ${list.template}?${parameter.name}= ${label} → ${r.status} ${r.text.slice(0, 300)}`;
          expect(r.status, shown).toBe(422);
          expect(r.body.code, shown).toBe("VALIDATION_FAILED");
          expect(r.body.message, shown).toBe("Invalid query");
          expect(r.body.details.fields, shown).toEqual([expected]);
          cases++;
        }
      }
    }
    expect(cases).toBeGreaterThan(100);
    expect(await totalRows()).toBe(before);
  }, 60_000);

  test("a bad limit beside a bad offset names both", async () => {
    const list = lists.find((l) => l.paging.some((p) => p.name === "offset"))!;
    const r = await t.request<Refusal<ValidationDetails>>("GET", `${list.path}?limit=500&offset=-1`, { token: owner.token });
    expect(r.status, r.text).toBe(422);
    expect(r.body.details.fields.map((f) => f.path).sort(), r.text).toEqual(["query.limit", "query.offset"]);
  });

  test("the bounds themselves are accepted", async () => {
    for (const list of lists.filter((l) => !l.template.includes("{"))) {
      const token = list.path.startsWith("/mcp") ? mcpKey : owner.token;
      for (const parameter of list.paging) {
        for (const value of [parameter.minimum, parameter.maximum]) {
          const r = await t.request("GET", `${list.path}?${parameter.name}=${value}`, { token });
          expect(r.status, `GET ${list.template}?${parameter.name}=${value} → ${r.status} ${r.text.slice(0, 300)}`).toBe(200);
        }
      }
    }
  });
});
