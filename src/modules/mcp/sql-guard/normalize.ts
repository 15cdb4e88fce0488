/**
 * Rewrites PostgreSQL syntax that sql-parser-cst cannot read into equivalent syntax it can, before
 * the guard parses. The guard checks the rewritten text (nothing is exempt from its rules), and
 * the rewrite keeps the meaning:
 *
 * - typed literals `timestamptz '2026-01-01'` → `'2026-01-01'::timestamptz` (the cast's type is
 *   then checked like any cast: `regclass 'pg_authid'` is refused as a cast to regclass);
 * - `substring(x FROM a FOR b)` → `substring(x, a, b)` (and the FROM-only and FOR-only forms);
 * - ordered-set aggregates `f(args) WITHIN GROUP (ORDER BY …)` → `f__within_group(args ORDER BY …)`,
 *   a marked call the guard checks and prints back as `f(args) WITHIN GROUP (ORDER BY …)`.
 *
 * It works on tokens, so string literals, quoted identifiers and comments are never rewritten.
 */
export const WITHIN_GROUP_SUFFIX = "__within_group";

/** Single-word type names a typed literal may use; the cast allowlist decides which are accepted. */
const LITERAL_TYPES: ReadonlySet<string> = new Set([
  "int2", "int4", "int8", "smallint", "integer", "int", "bigint", "numeric", "decimal", "real", "float4", "float8", "float",
  "text", "varchar", "char", "bpchar", "bool", "boolean", "timestamptz", "timetz", "json", "jsonb", "uuid", "money", "bytea",
  "inet", "cidr", "macaddr", "xml", "tsvector", "tsquery", "oid", "name", "xid", "cid", "tid", "pg_lsn",
  "regclass", "regproc", "regprocedure", "regoper", "regoperator", "regtype", "regnamespace", "regrole", "regconfig", "regdictionary", "regcollation",
]);

type TokenKind = "word" | "string" | "quoted" | "comment" | "space" | "other";
interface Token {
  kind: TokenKind;
  text: string;
}

function tokenize(sql: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number) => {
    tokens.push({ kind, text: sql.slice(i, end) });
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (/\s/.test(c)) {
      let end = i + 1;
      while (end < sql.length && /\s/.test(sql[end]!)) end++;
      push("space", end);
    } else if (c === "-" && next === "-") {
      const end = sql.indexOf("\n", i);
      push("comment", end < 0 ? sql.length : end);
    } else if (c === "/" && next === "*") {
      let depth = 0;
      let end = i;
      while (end < sql.length) {
        if (sql.startsWith("/*", end)) {
          depth++;
          end += 2;
        } else if (sql.startsWith("*/", end)) {
          depth--;
          end += 2;
          if (depth === 0) break;
        } else end++;
      }
      push("comment", end);
    } else if (c === "'" || ((c === "e" || c === "E") && next === "'")) {
      const backslashes = c !== "'";
      let end = backslashes ? i + 2 : i + 1;
      while (end < sql.length) {
        if (backslashes && sql[end] === "\\") end += 2;
        else if (sql[end] === "'" && sql[end + 1] === "'") end += 2;
        else if (sql[end] === "'") {
          end++;
          break;
        } else end++;
      }
      push("string", end);
    } else if (c === '"') {
      let end = i + 1;
      while (end < sql.length) {
        if (sql[end] === '"' && sql[end + 1] === '"') end += 2;
        else if (sql[end] === '"') {
          end++;
          break;
        } else end++;
      }
      push("quoted", end);
    } else if (c === "$" && /[A-Za-z_$]/.test(next ?? "")) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))?.[0];
      const close = tag ? sql.indexOf(tag, i + tag.length) : -1;
      if (tag && close >= 0) push("string", close + tag.length);
      else push("other", i + 1);
    } else if (/[A-Za-z_]/.test(c)) {
      let end = i + 1;
      while (end < sql.length && /[A-Za-z0-9_$]/.test(sql[end]!)) end++;
      push("word", end);
    } else {
      push("other", i + 1);
    }
  }
  return tokens;
}

const isWord = (token: Token | undefined, word: string) => token?.kind === "word" && token.text.toLowerCase() === word;
const significant = (tokens: Token[], from: number, step: 1 | -1): number => {
  let index = from;
  while (index >= 0 && index < tokens.length && (tokens[index]!.kind === "space" || tokens[index]!.kind === "comment")) index += step;
  return index;
};

/** The index of the `)` that closes the `(` at `open`, or -1. */
function closing(tokens: Token[], open: number): number {
  let depth = 0;
  for (let index = open; index < tokens.length; index++) {
    const text = tokens[index]!.kind === "other" ? tokens[index]!.text : "";
    if (text === "(") depth++;
    else if (text === ")" && --depth === 0) return index;
  }
  return -1;
}

function typedLiterals(tokens: Token[]): void {
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (token.kind !== "word" || !LITERAL_TYPES.has(token.text.toLowerCase())) continue;
    const literal = significant(tokens, index + 1, 1);
    if (tokens[literal]?.kind !== "string" || !tokens[literal]!.text.startsWith("'")) continue;
    const before = tokens[significant(tokens, index - 1, -1)];
    if (before?.text === "." || before?.text === "::") continue;
    tokens[index] = { kind: "other", text: `${tokens[literal]!.text}::${token.text}` };
    for (let gap = index + 1; gap <= literal; gap++) tokens[gap] = { kind: "space", text: "" };
  }
}

function substringForms(tokens: Token[]): void {
  for (let index = 0; index < tokens.length; index++) {
    if (!isWord(tokens[index], "substring")) continue;
    const open = significant(tokens, index + 1, 1);
    if (tokens[open]?.text !== "(") continue;
    const close = closing(tokens, open);
    if (close < 0) continue;
    let depth = 0;
    let from = -1;
    let forAt = -1;
    for (let inner = open + 1; inner < close; inner++) {
      const text = tokens[inner]!.text;
      if (tokens[inner]!.kind === "other" && text === "(") depth++;
      else if (tokens[inner]!.kind === "other" && text === ")") depth--;
      else if (depth === 0 && isWord(tokens[inner], "from") && from < 0) from = inner;
      else if (depth === 0 && isWord(tokens[inner], "for") && forAt < 0) forAt = inner;
    }
    if (from < 0 && forAt < 0) continue;
    if (from >= 0) tokens[from] = { kind: "other", text: "," };
    if (forAt >= 0) tokens[forAt] = { kind: "other", text: from >= 0 ? "," : ", 1," };
  }
}

function withinGroup(tokens: Token[]): void {
  for (let index = 0; index < tokens.length; index++) {
    const name = tokens[index]!;
    if (name.kind !== "word") continue;
    const open = significant(tokens, index + 1, 1);
    if (tokens[open]?.text !== "(") continue;
    const close = closing(tokens, open);
    if (close < 0) continue;
    const within = significant(tokens, close + 1, 1);
    const group = significant(tokens, within + 1, 1);
    const orderOpen = significant(tokens, group + 1, 1);
    if (!isWord(tokens[within], "within") || !isWord(tokens[group], "group") || tokens[orderOpen]?.text !== "(") continue;
    const orderClose = closing(tokens, orderOpen);
    if (orderClose < 0) continue;
    const hasArgs = tokens.slice(open + 1, close).some((token) => token.kind !== "space" && token.kind !== "comment");
    tokens[index] = { kind: "word", text: `${name.text}${WITHIN_GROUP_SUFFIX}` };
    // f(args) WITHIN GROUP (ORDER BY …)  →  f__within_group(args ORDER BY …)
    tokens[close] = { kind: "space", text: hasArgs ? " " : "" };
    for (let gap = close + 1; gap <= orderOpen; gap++) tokens[gap] = { kind: "space", text: "" };
  }
}

export function normalizeSql(sql: string): string {
  if (!/[a-z0-9_]\s*'|substring|within/i.test(sql)) return sql;
  const tokens = tokenize(sql);
  typedLiterals(tokens);
  substringForms(tokens);
  withinGroup(tokens);
  return tokens.map((token) => token.text).join("");
}
