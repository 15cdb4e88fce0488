import type * as SqlParser from "sql-parser-cst";

/** The SQL parser is loaded at the first query to guard: an idle server need not hold it. */
const sqlParser = (): typeof SqlParser => require("sql-parser-cst");
import { LruMap } from "../../../lib/lru";
import { ALLOWED_CAST_TYPES, ALLOWED_FUNCTIONS, ORDERED_SET_AGGREGATES, TABLE_FUNCTIONS } from "./functions";
import { normalizeSql, WITHIN_GROUP_SUFFIX } from "./normalize";
import { READABLE_COLUMN_NAMES, READABLE_TABLE_NAMES, READABLE_TABLES, VIEW_SCHEMA } from "./readable-tables";

export type GuardReason = "PARSE_ERROR" | "NOT_A_SELECT" | "MULTIPLE_STATEMENTS" | "FORBIDDEN_TABLE" | "FORBIDDEN_FUNCTION" | "FORBIDDEN_CLAUSE";

/**
 * A safe statement; when `bindsClinic`, `$1` is the clinic id, bound by the executor, never
 * spliced. With named parameters (saved reports), `parameters` lists their names in the order of
 * the positions that follow: `$2`, `$3`… (or `$1`… when the clinic is not bound).
 */
export type GuardResult =
  | { ok: true; sql: string; bindsClinic: boolean; parameters?: string[] }
  | { ok: false; reason: GuardReason; message: string };

/**
 * Named placeholders (`:from`) a statement may use, each with the SQL type its value is cast to.
 * Without it, any parameter is refused.
 */
export type ParameterTypes = ReadonlyMap<string, string>;

export const MAX_SQL_LENGTH = 10_000;
export const MAX_NESTING = 40;

class Refusal extends Error {
  constructor(readonly reason: GuardReason, message: string) {
    super(message);
  }
}

/** CST nodes are walked generically: by their `type` and their child keys. */
type Node = { type: string; [key: string]: any };

/**
 * Node types a query may contain. Anything not listed (DDL, DML, COPY, SET, DO, CALL, LOCK,
 * ONLY, TABLESAMPLE, ROWS FROM, INTO, FOR UPDATE, parameters…) is refused: an allowlist,
 * so what the parser learns tomorrow is refused until someone looks at it.
 */
const ALLOWED_NODES: ReadonlySet<string> = new Set([
  "select_stmt", "compound_select_stmt", "with_clause", "common_table_expr", "select_clause", "from_clause", "where_clause",
  "group_by_clause", "group_by_rollup", "group_by_cube", "group_by_grouping_sets", "having_clause", "order_by_clause",
  "sort_specification", "sort_direction_asc", "sort_direction_desc", "sort_nulls_first", "sort_nulls_last", "limit_clause",
  "offset_clause", "fetch_clause", "window_clause", "named_window", "window_definition", "partition_by_clause", "frame_clause",
  "frame_between", "frame_bound_preceding", "frame_bound_following", "frame_unbounded", "frame_bound_current_row",
  "frame_exclusion", "values_clause", "select_distinct", "select_all", "select_distinct_on", "distinct_arg",
  "list_expr", "paren_expr", "keyword", "identifier", "alias", "all_columns", "member_expr", "array_subscript",
  "array_slice_specifier", "binary_expr", "prefix_op_expr", "postfix_op_expr", "func_call", "func_args", "filter_arg",
  "over_arg", "join_expr", "join_on_specification", "join_using_specification", "lateral_derived_table", "case_expr",
  "case_when", "case_else", "between_expr", "cast_expr", "cast_arg", "cast_operator_expr", "data_type_name",
  "modified_data_type", "array_data_type", "array_bounds", "extract_expr", "extract_from", "interval_unit",
  "interval_unit_range", "interval_literal", "date_literal", "time_literal", "timestamp_literal", "string_literal",
  "number_literal", "boolean_literal", "null_literal", "array_literal_expr", "array_expr", "quantifier_expr",
  "row_constructor", "empty", "space", "newline", "line_comment", "block_comment", "column_list", "named_arg",
]);

/** Folds unquoted identifiers to lower case and keeps quoted ones exactly; U&"…" is refused. */
function identifierName(node: Node): string {
  const text = String(node.text ?? "");
  if (/^u&/i.test(text)) throw new Refusal("FORBIDDEN_CLAUSE", "Unicode-escaped identifiers (U&\"…\") are not allowed");
  return text.startsWith('"') ? String(node.name) : String(node.name).toLowerCase();
}

function nestingDepth(sql: string): number {
  let depth = 0;
  let max = 0;
  for (const char of sql) {
    if (char === "(" || char === "[") max = Math.max(max, ++depth);
    else if (char === ")" || char === "]") depth--;
  }
  return max;
}

const showNode = (node: Node): string => sqlParser().show(node as Parameters<typeof SqlParser.show>[0]);
const isQuery = (node: Node | undefined): boolean => node?.type === "select_stmt" || node?.type === "compound_select_stmt";

/** Column names that are timestamptz in every readable table that has them (created_at, paid_at…). */
const TIMESTAMPTZ_COLUMNS: ReadonlySet<string> = new Set(
  [...READABLE_COLUMN_NAMES].filter((name) => READABLE_TABLES.every((t) => t.columns.every((c) => c.name !== name || c.type === "timestamptz"))),
);
const COMPARISONS: ReadonlySet<string> = new Set(["<", "<=", ">", ">=", "=", "<>", "!="]);
const DATE_OR_TIMESTAMP: ReadonlySet<string> = new Set(["date", "timestamp", "timestamp without time zone"]);
const DATE_VALUED_FUNCTIONS: ReadonlySet<string> = new Set(["current_date", "localtimestamp", "make_date", "make_timestamp", "to_date"]);

const keywordName = (keyword: Node) => String(keyword.name).toLowerCase();

/**
 * The type a cast names, as the allowlist spells it, whichever way the statement spells the cast
 * (`x::t`, `CAST(x AS t)`, or a typed literal `t 'x'`, which the normaliser turns into `'x'::t`).
 * The parser gives the SQL-standard types their own nodes: `timestamp [(p)] [with[out] time zone]`
 * and `time …` are a time_data_type, `interval [fields]` an interval_data_type; precision and
 * fields restrict the value, not the type. Anything else (a schema-qualified name, SETOF, …) has
 * no name here, and is refused.
 */
function castTypeName(node: Node | undefined): string {
  switch (node?.type) {
    case "identifier":
      return identifierName(node);
    case "data_type_name":
      return showNode(node).trim().toLowerCase().replace(/\s+/g, " ");
    case "time_data_type":
      return [node.timeKw, ...(node.timeZoneKw ?? [])].map(keywordName).join(" ");
    case "interval_data_type":
      return keywordName(node.intervalKw);
    default:
      return "";
  }
}

function isTimestamptzColumn(node: Node | undefined): boolean {
  const name = node?.type === "member_expr" ? node.property : node;
  return name?.type === "identifier" && TIMESTAMPTZ_COLUMNS.has(identifierName(name));
}

/** Per readable table, the clinic's live rows of its curated view, with the clinic id as `$1`. */
const CLINIC_ROWS: ReadonlyMap<string, string> = new Map(
  READABLE_TABLES.map((table) => {
    const columns = table.columns.map((c) => c.name).join(", ");
    return [table.name, `(SELECT ${columns} FROM ${VIEW_SCHEMA}.${table.name} WHERE clinic_id = $1)`];
  }),
);

/**
 * The replacement for a table reference. `show` prints an identifier node as its text, so a
 * node carrying the fixed subquery text serializes to it without cloning a parsed template
 * per reference (the clone cost more than the rest of the check).
 */
function clinicRows(table: Node, aliased: boolean): Node {
  const rows = CLINIC_ROWS.get(identifierName(table))!;
  return { type: "identifier", text: aliased ? rows : `${rows} AS ${table.text}`, name: table.name, leading: table.leading, trailing: table.trailing };
}

class Checker {
  /** Whether a readable table was rewritten, so the statement carries `$1`. */
  bindsClinic = false;
  /** The named placeholders met, in order (saved reports only). */
  readonly placeholders: Node[] = [];
  /**
   * Comparisons of a timestamptz column with a date or timestamp value, by the side holding the
   * value. PostgreSQL compares the two types with operators it does not mark leakproof, and
   * row-level security keeps such a condition from using an index (it must run after the
   * clinic's rows are chosen): `scheduled_at >= current_date` would read every visit of the
   * clinic. The value is cast to timestamptz instead, which is what those operators do to it
   * (in the session's time zone), so the rows are the same and the index is usable.
   */
  private readonly timestampOperands: { parent: Node; key: string }[] = [];
  /** Every name the query itself introduces (aliases, CTE names and columns): valid after `x.`. */
  private readonly declared = new Set<string>();

  constructor(
    root: Node,
    private readonly parameterTypes?: ParameterTypes,
  ) {
    this.collectDeclared(root);
  }

  /**
   * Numbers the placeholders after the walk (the clinic id, if bound, is `$1`) and casts each to
   * its declared type, so a value is always one typed datum, whatever text it holds.
   */
  numberPlaceholders(): string[] {
    const names = [...new Set(this.placeholders.map((node) => String(node.text).slice(1)))];
    const first = this.bindsClinic ? 2 : 1;
    for (const node of this.placeholders) {
      const name = String(node.text).slice(1);
      // Declared as text, then cast: drivers infer a parameter's type from the statement and would
      // otherwise re-encode the text they are given (postgres.js sends the string "true" as false).
      const position = `CAST($${first + names.indexOf(name)} AS text)`;
      const type = this.parameterTypes?.get(name) ?? "text";
      node.text = type === "text" ? position : `CAST(${position} AS ${type})`;
    }
    return names;
  }

  /** Casts the noted date and timestamp values to timestamptz (after the placeholders have their final text). */
  castTimestampOperands(): void {
    for (const { parent, key } of this.timestampOperands) {
      parent[key] = { type: "identifier", text: ` CAST((${showNode(parent[key]).trim()}) AS timestamptz) `, name: "" };
    }
  }

  private noteTimestampComparison(n: Node): void {
    if (n.type === "binary_expr" && typeof n.operator === "string" && COMPARISONS.has(n.operator)) {
      if (isTimestamptzColumn(n.left) && this.isDateValued(n.right)) this.timestampOperands.push({ parent: n, key: "right" });
      else if (isTimestamptzColumn(n.right) && this.isDateValued(n.left)) this.timestampOperands.push({ parent: n, key: "left" });
    } else if (n.type === "between_expr" && isTimestamptzColumn(n.left)) {
      for (const key of ["begin", "end"]) if (this.isDateValued(n[key])) this.timestampOperands.push({ parent: n, key });
    }
  }

  /** Whether an expression is, by its form, a date or a timestamp without time zone. */
  private isDateValued(node: Node | undefined): boolean {
    switch (node?.type) {
      case "date_literal":
      case "timestamp_literal":
        return true;
      case "cast_operator_expr":
        return DATE_OR_TIMESTAMP.has(castTypeName(node.right));
      case "cast_expr":
        return DATE_OR_TIMESTAMP.has(castTypeName(node.args?.expr?.dataType));
      case "func_call":
        return node.name?.type === "identifier" && DATE_VALUED_FUNCTIONS.has(identifierName(node.name));
      case "paren_expr":
        return this.isDateValued(node.expr);
      case "binary_expr": // date ± days is a date, date or timestamp ± interval a timestamp
        return (node.operator === "+" || node.operator === "-") && this.isDateValued(node.left);
      case "parameter":
        return DATE_OR_TIMESTAMP.has(this.parameterTypes?.get(String(node.text).slice(1)) ?? "");
      default:
        return false;
    }
  }

  private collectDeclared(node: unknown): void {
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node)) return node.forEach((n) => this.collectDeclared(n));
    const n = node as Node;
    if (n.type === "alias" && n.alias?.type === "identifier") this.declared.add(identifierName(n.alias));
    if (n.type === "common_table_expr" && n.table?.type === "identifier") this.declared.add(identifierName(n.table));
    for (const [key, value] of Object.entries(n)) if (key !== "range") this.collectDeclared(value);
    // Column lists after an alias or a CTE name, `x(a, b)`, declare output names too.
    if (n.type === "paren_expr" && n.expr?.type === "list_expr") {
      for (const item of n.expr.items ?? []) if (item?.type === "identifier") this.declared.add(identifierName(item));
    }
  }

  /** A query (select, set operation, VALUES) with the CTE names visible in `scope`. */
  query(node: Node, scope: Set<string>): void {
    if (node.type === "compound_select_stmt") {
      this.query(node.left, scope);
      this.query(node.right, scope);
      return;
    }
    if (node.type === "paren_expr") return this.query(node.expr, scope);
    if (node.type !== "select_stmt") throw new Refusal("NOT_A_SELECT", `A ${node.type.replace(/_stmt$/, "").replaceAll("_", " ")} is not a read-only query`);
    let inner = scope;
    for (const clause of node.clauses as Node[]) {
      if (clause.type === "with_clause") inner = this.withClause(clause, scope);
      else if (clause.type === "into_table_clause") throw new Refusal("FORBIDDEN_CLAUSE", "SELECT … INTO is not allowed");
      else if (clause.type === "for_clause") throw new Refusal("FORBIDDEN_CLAUSE", "FOR UPDATE/SHARE is not allowed");
      else if (clause.type === "table_clause") throw new Refusal("FORBIDDEN_CLAUSE", "TABLE x is not allowed; use SELECT * FROM x");
      else if (clause.type === "from_clause") clause.expr = this.from(clause.expr, inner);
      else this.expr(clause, inner);
    }
  }

  /** CTEs see the tables and the CTEs defined before them; the query sees them all. */
  private withClause(clause: Node, scope: Set<string>): Set<string> {
    if (clause.recursiveKw) throw new Refusal("FORBIDDEN_CLAUSE", "Recursive CTEs (WITH RECURSIVE) are not allowed");
    const visible = new Set(scope);
    for (const cte of clause.tables.items as Node[]) {
      if (cte.type !== "common_table_expr") throw new Refusal("FORBIDDEN_CLAUSE", `${cte.type} is not allowed in WITH`);
      const body = cte.expr?.type === "paren_expr" ? cte.expr.expr : cte.expr;
      if (!isQuery(body)) throw new Refusal("FORBIDDEN_CLAUSE", "Data-modifying CTEs are not allowed: a CTE must be a SELECT");
      this.query(body, new Set(visible));
      visible.add(identifierName(cte.table));
    }
    return visible;
  }

  /** An item of FROM: a table, a CTE, a subquery, a join, or an allowlisted table function. */
  private from(node: Node, scope: Set<string>): Node {
    switch (node.type) {
      case "identifier":
        return this.table(node, scope, null);
      case "alias": {
        if (node.expr.type === "identifier") node.expr = this.table(node.expr, scope, node);
        else node.expr = this.from(node.expr, scope);
        return node;
      }
      case "list_expr":
        node.items = (node.items as Node[]).map((item) => this.from(item, scope));
        return node;
      case "join_expr":
        node.left = this.from(node.left, scope);
        node.right = this.from(node.right, scope);
        if (node.specification) this.expr(node.specification, scope);
        return node;
      case "paren_expr":
        if (isQuery(node.expr)) this.query(node.expr, scope);
        else node.expr = this.from(node.expr, scope);
        return node;
      case "lateral_derived_table":
        if (node.expr.type === "paren_expr" && isQuery(node.expr.expr)) this.query(node.expr, scope);
        else node.expr = this.from(node.expr, scope);
        return node;
      case "func_call": {
        const name = node.name?.type === "identifier" ? identifierName(node.name) : "";
        if (!TABLE_FUNCTIONS.has(name)) throw new Refusal("FORBIDDEN_FUNCTION", `Function ${name || showNode(node.name)} is not allowed in FROM`);
        this.expr(node.args, scope);
        return node;
      }
      case "member_expr":
        throw new Refusal("FORBIDDEN_TABLE", `Schema-qualified names are not allowed (${showNode(node).trim()})`);
      case "table_without_inheritance":
        throw new Refusal("FORBIDDEN_CLAUSE", "ONLY is not allowed");
      case "rows_from_expr":
        throw new Refusal("FORBIDDEN_FUNCTION", "ROWS FROM is not allowed");
      default:
        throw new Refusal("FORBIDDEN_CLAUSE", `${node.type.replaceAll("_", " ")} is not allowed in FROM`);
    }
  }

  /** A table name: a CTE in scope stays; a readable table becomes the clinic's rows; else refused. */
  private table(node: Node, scope: Set<string>, alias: Node | null): Node {
    const name = identifierName(node);
    if (scope.has(name)) return node;
    if (!READABLE_TABLE_NAMES.has(name)) throw new Refusal("FORBIDDEN_TABLE", `Table ${name} cannot be read; see describe_schema`);
    this.bindsClinic = true;
    return clinicRows(node, alias !== null);
  }

  /** Any expression: every node allowlisted, every function allowlisted, subqueries checked as queries. */
  expr(node: unknown, scope: Set<string>): void {
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node)) return node.forEach((n) => this.expr(n, scope));
    const n = node as Node;
    if (isQuery(n)) return this.query(n, scope);
    if (n.type === "parameter") {
      if (!this.parameterTypes) throw new Refusal("FORBIDDEN_CLAUSE", "Query parameters are not allowed; write values inline");
      if (!/^:[a-z][a-z0-9_]*$/.test(String(n.text))) throw new Refusal("FORBIDDEN_CLAUSE", `Placeholder ${n.text} is not allowed; write :name in lower-case snake_case`);
      this.placeholders.push(n);
      return;
    }
    if (n.type === "identifier") return void identifierName(n);
    if (n.type === "func_call") return this.funcCall(n, scope);
    if (n.type === "member_expr") return this.member(n, scope);
    if (n.type === "cast_operator_expr") {
      this.castType(n.right);
      return this.expr(n.left, scope);
    }
    if (n.type === "cast_arg") {
      this.castType(n.dataType);
      return this.expr(n.expr, scope);
    }
    if (n.type === "data_type_name") return this.castType(n);
    if (!ALLOWED_NODES.has(n.type)) throw new Refusal("FORBIDDEN_CLAUSE", `${n.type.replaceAll("_", " ")} is not allowed`);
    this.noteTimestampComparison(n);
    for (const [key, value] of Object.entries(n)) if (key !== "range" && key !== "type") this.expr(value, scope);
  }

  /** Casts target plain data types only: reg* and other catalog types would look things up. */
  private castType(node: Node): void {
    if (node?.type === "modified_data_type" || node?.type === "array_data_type") return this.castType(node.dataType);
    if (node?.type === "member_expr") {
      throw new Refusal("FORBIDDEN_CLAUSE", `Schema-qualified type names are not allowed (${showNode(node).trim()}); cast to a plain type name such as interval, timestamptz or numeric`);
    }
    const typeName = castTypeName(node);
    if (!ALLOWED_CAST_TYPES.has(typeName)) throw new Refusal("FORBIDDEN_CLAUSE", `Casts to ${typeName || showNode(node).trim() || "that type"} are not allowed`);
  }

  private funcCall(node: Node, scope: Set<string>): void {
    if (node.name?.type !== "identifier") throw new Refusal("FORBIDDEN_FUNCTION", `Function ${showNode(node.name).trim()} is not allowed (schema-qualified); call it by its plain name`);
    const name = identifierName(node.name);
    if (name.endsWith(WITHIN_GROUP_SUFFIX)) return this.withinGroupCall(node, name.slice(0, -WITHIN_GROUP_SUFFIX.length), scope);
    if (!ALLOWED_FUNCTIONS.has(name)) throw new Refusal("FORBIDDEN_FUNCTION", `Function ${name} is not allowed; describe_schema lists the allowed functions by group`);
    for (const key of ["args", "filter", "over", "withinGroup"]) this.expr(node[key], scope);
  }

  /**
   * `f__within_group(args ORDER BY …)` is how the normaliser hands over `f(args) WITHIN GROUP
   * (ORDER BY …)`: checked like any call, then printed back in the form PostgreSQL expects.
   */
  private withinGroupCall(node: Node, base: string, scope: Set<string>): void {
    if (!ORDERED_SET_AGGREGATES.has(base) || !ALLOWED_FUNCTIONS.has(base)) {
      throw new Refusal("FORBIDDEN_FUNCTION", `Function ${base} is not allowed with WITHIN GROUP; allowed: ${[...ORDERED_SET_AGGREGATES].join(", ")}`);
    }
    const args = node.args?.expr;
    const orderBy = args?.orderBy;
    if (args?.type !== "func_args" || !orderBy) throw new Refusal("FORBIDDEN_CLAUSE", `${base}(…) WITHIN GROUP needs (ORDER BY …)`);
    for (const key of ["args", "filter", "over"]) this.expr(node[key], scope);
    args.orderBy = undefined;
    node.name = { ...node.name, text: base, name: base };
    const filter = node.filter ? showNode(node.filter) : "";
    node.filter = { type: "identifier", text: ` WITHIN GROUP (${showNode(orderBy).trim()})${filter}`, name: "" };
  }

  /**
   * `alias.column` only. PostgreSQL reads `x.f` and `(x).f` as f(x) when no column f exists,
   * so the name after the dot must be a known column or a name the query declared.
   */
  private member(node: Node, scope: Set<string>): void {
    const { object, property } = node;
    if (property?.type === "array_subscript") return this.expr([object, property.expr], scope);
    if (object?.type === "member_expr") throw new Refusal("FORBIDDEN_TABLE", `Schema-qualified names are not allowed (${showNode(node).trim()})`);
    if (object?.type !== "identifier") throw new Refusal("FORBIDDEN_FUNCTION", `Attribute notation on an expression is not allowed (${showNode(node).trim()})`);
    identifierName(object);
    if (property?.type === "all_columns") return;
    if (property?.type !== "identifier") throw new Refusal("FORBIDDEN_CLAUSE", `${showNode(node).trim()} is not allowed`);
    const column = identifierName(property);
    if (!READABLE_COLUMN_NAMES.has(column) && !this.declared.has(column)) {
      throw new Refusal("FORBIDDEN_FUNCTION", `${showNode(node).trim()} is neither a known column nor a name the query declares`);
    }
  }
}

/**
 * The guard is a pure function of the text, and dashboards and agents repeat their queries,
 * so recent verdicts are kept (parsing is most of the cost: about 0.4 ms a statement). Each app
 * owns its cache (through its MCP runtime).
 */
export class GuardVerdicts {
  private readonly verdicts = new LruMap<string, GuardResult>(1000);

  /** guardSql, answered from the cache for a statement (and parameter types) seen lately. */
  check(sql: string, parameterTypes?: ParameterTypes): GuardResult {
    const cacheKey = parameterTypes ? `${JSON.stringify([...parameterTypes])}\0${sql}` : sql;
    const known = this.verdicts.get(cacheKey);
    if (known) return known;
    const verdict = guardSql(sql, parameterTypes);
    if (sql.length <= MAX_SQL_LENGTH) this.verdicts.set(cacheKey, verdict);
    return verdict;
  }
}

/**
 * Checks one statement against the rules and rewrites every readable table into that clinic's
 * rows. Returns the SQL to run (clinic id as `$1`) or a refusal with its reason.
 */
export function guardSql(sql: string, parameterTypes?: ParameterTypes): GuardResult {
  try {
    if (sql.length > MAX_SQL_LENGTH) throw new Refusal("PARSE_ERROR", `The statement is longer than ${MAX_SQL_LENGTH} characters`);
    if (nestingDepth(sql) > MAX_NESTING) throw new Refusal("PARSE_ERROR", `The statement nests deeper than ${MAX_NESTING} levels`);
    let program: Node;
    try {
      program = sqlParser().parse(normalizeSql(sql), { dialect: "postgresql", includeSpaces: true, includeNewlines: true, includeComments: true, paramTypes: parameterTypes ? [":name"] : ["$nr"] }) as Node;
    } catch (error) {
      const first = error instanceof Error ? error.message.split("\n")[0] : "unreadable";
      throw new Refusal("PARSE_ERROR", `The statement could not be parsed: ${first}. Write one PostgreSQL SELECT; for a typed value of a multi-word type write '2026-01-01'::timestamptz`);
    }
    const statements = (program.statements as Node[]).filter((s) => s.type !== "empty");
    if (statements.length === 0) throw new Refusal("PARSE_ERROR", "The statement is empty");
    if (statements.length > 1) throw new Refusal("MULTIPLE_STATEMENTS", "Send exactly one statement");
    const statement = statements[0]!;
    if (!isQuery(statement)) throw new Refusal("NOT_A_SELECT", `A ${statement.type.replace(/_stmt$/, "").replaceAll("_", " ")} statement is not a read-only query`);
    const checker = new Checker(statement, parameterTypes);
    checker.query(statement, new Set());
    const parameters = parameterTypes ? checker.numberPlaceholders() : undefined;
    checker.castTimestampOperands();
    const checked = showNode(statement).trim();
    return parameters ? { ok: true, sql: checked, bindsClinic: checker.bindsClinic, parameters } : { ok: true, sql: checked, bindsClinic: checker.bindsClinic };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.reason, message: error.message };
    // Anything else the parser or walker throws (stack overflow included) is still a refusal.
    return { ok: false, reason: "PARSE_ERROR", message: "The statement could not be parsed" };
  }
}
