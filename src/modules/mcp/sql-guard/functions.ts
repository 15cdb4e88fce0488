/**
 * The functions `query_database` may call, by group, each with why it is safe. Everything
 * else is refused: nothing that sleeps, reads files, touches settings, takes locks, runs SQL
 * from a string (query_to_xml, ts_stat, dblink…), or allocates without bound (repeat, lpad,
 * rpad, format with widths, generate_series).
 */
export const FUNCTION_GROUPS: Record<string, { reason: string; names: string[] }> = {
  aggregates: {
    reason: "Summarize rows the query already reads; memory grows only with the clinic's own rows",
    names: ["count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every", "string_agg", "array_agg", "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "mode", "percentile_cont", "percentile_disc", "corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept"],
  },
  window: {
    reason: "Rank and compare rows within the result; no side effects",
    names: ["row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value"],
  },
  math: {
    reason: "Pure arithmetic on numbers",
    names: ["abs", "ceil", "ceiling", "floor", "round", "trunc", "sign", "sqrt", "cbrt", "power", "pow", "exp", "ln", "log", "log10", "mod", "div", "width_bucket", "random", "pi", "degrees", "radians"],
  },
  string: {
    reason: "Transform text without producing more than a bounded multiple of their input",
    names: ["length", "char_length", "character_length", "octet_length", "lower", "upper", "initcap", "trim", "btrim", "ltrim", "rtrim", "substr", "substring", "left", "right", "position", "strpos", "replace", "split_part", "concat", "concat_ws", "starts_with", "reverse", "translate", "md5", "regexp_replace", "regexp_match"],
  },
  datetime: {
    reason: "Read the clock or do calendar arithmetic; no side effects",
    names: ["now", "current_date", "current_time", "current_timestamp", "localtime", "localtimestamp", "statement_timestamp", "transaction_timestamp", "timeofday", "clock_timestamp", "date_trunc", "date_part", "date_bin", "age", "make_date", "make_time", "make_timestamp", "make_timestamptz", "make_interval", "to_char", "to_date", "to_timestamp", "to_number", "justify_days", "justify_hours", "justify_interval", "timezone", "isfinite"],
  },
  conditional: {
    reason: "Choose between values",
    names: ["coalesce", "nullif", "greatest", "least"],
  },
  json: {
    reason: "Build JSON from values the query already has",
    names: ["json_build_object", "jsonb_build_object", "json_build_array", "jsonb_build_array", "to_json", "to_jsonb", "row_to_json", "json_typeof", "jsonb_typeof", "jsonb_array_length", "json_array_length"],
  },
};

/**
 * Aggregates written `f(args) WITHIN GROUP (ORDER BY …)`: the median and other percentiles, the
 * mode, and the hypothetical-set ranks. Each is also in the lists above.
 */
export const ORDERED_SET_AGGREGATES: ReadonlySet<string> = new Set(["percentile_cont", "percentile_disc", "mode", "rank", "dense_rank", "percent_rank", "cume_dist"]);

/** Functions allowed in FROM (set-returning): only ones bounded by their input. */
export const TABLE_FUNCTIONS: ReadonlySet<string> = new Set(["unnest"]);

export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(Object.values(FUNCTION_GROUPS).flatMap((g) => g.names));

/** Type names a cast may target: plain data types, never reg* lookups or other catalog types. */
export const ALLOWED_CAST_TYPES: ReadonlySet<string> = new Set([
  "int", "integer", "int2", "int4", "int8", "smallint", "bigint", "numeric", "decimal", "real", "float", "float4", "float8", "double precision", "double",
  "text", "varchar", "character varying", "char", "character", "bool", "boolean", "date", "time", "timestamp", "timestamptz", "timestamp with time zone",
  "timestamp without time zone", "timetz", "time with time zone", "time without time zone", "interval", "uuid", "json", "jsonb",
]);
