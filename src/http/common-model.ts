import { FormatRegistry, Type, type TObject, type TPartial, type TProperties } from "@sinclair/typebox";
import { t, type Static, type TSchema } from "elysia";
import type { ErrorBody } from "../lib/errors";
import { dateProblem, timestampProblem } from "../lib/time";

// The one date and timestamp rule, for every schema that says `format: date` or `date-time`
// (Elysia registers lenient ones that take "2026-02-30" or a timestamp without an offset).
FormatRegistry.Set("date", (value) => dateProblem(value) === null);
FormatRegistry.Set("date-time", (value) => timestampProblem(value) === null);

/**
 * Body integers use TypeBox's own Integer: Elysia's `t.Integer` also accepts numeric strings
 * in bodies (elysiajs/elysia#1532), and the contract wants `"100"` to be a 422.
 */
export const StrictInteger = (options: Parameters<typeof Type.Integer>[0] = {}) => Type.Integer(options);

/** Money: an integer in the smallest currency unit, never a float or a string. */
export const Money = (options: Parameters<typeof Type.Integer>[0] = {}) =>
  Type.Integer({ minimum: 0, maximum: 1_000_000_000_000, description: "Integer amount in the smallest currency unit", ...options });

export const Uuid = t.String({ format: "uuid", description: "UUIDv7 identifier" });
export const IdParams = t.Object({ id: Uuid });
/** RFC 3339 with Z or an offset, a real instant, years 1900–2999 (see `timestampProblem`). */
export const Timestamp = t.String({ format: "date-time", examples: ["2026-01-15T12:00:00Z"] });
/** YYYY-MM-DD, a real calendar day, years 1900–2999 (see `dateProblem`). */
export const DateOnly = t.String({ format: "date", examples: ["2026-01-15"] });
export const Currency = t.String({ pattern: "^[A-Z]{3}$", examples: ["CLP"] });
/** A phone number as people write it: digits, spaces, parentheses and hyphens, an optional leading +. */
export const PhoneNumber = t.String({ pattern: "^\\+?[0-9 ()-]{6,20}$", examples: ["+56912345678"] });

export const ErrorEnvelope = t.Object(
  {
    error: t.String(),
    code: t.String(),
    message: t.String(),
    details: t.Optional(t.Record(t.String(), t.Unknown())),
    request_id: t.String(),
    retry_after: t.Optional(t.Integer()),
  },
  { description: "The one error envelope" },
);
/** The schema describes exactly what `envelope()` builds: a field added to, or changed in, only one of them does not compile. */
export type ErrorEnvelopeIsErrorBody = MustBeTrue<SameType<Static<typeof ErrorEnvelope>, ErrorBody>>;
type SameType<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false;
type MustBeTrue<T extends true> = T;

/** Standard error responses to merge into a route's `response` map. */
export const errorResponses = (...statuses: (400 | 401 | 403 | 404 | 409 | 413 | 422 | 429)[]) =>
  Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope])) as Record<number, typeof ErrorEnvelope>;

/** A value or null. */
export const Nullable = <T extends TSchema>(schema: T, options = {}) => t.Union([schema, t.Null()], options);
/** A body field that may be left out, or sent as null to clear it. */
export const OptionalNullable = <T extends TSchema>(schema: T) => t.Optional(Nullable(schema));
export const NullableString = (options = {}) => Nullable(t.String(options));
export const NullableTimestamp = Nullable(Timestamp);

/** A PATCH body: the create body's fields, each optional, at least one of them sent. */
export const UpdateBody = <T extends TProperties>(create: TObject<T>) =>
  t.Object(Object.fromEntries(Object.entries(create.properties).map(([name, schema]) => [name, t.Optional(schema as TSchema)])), { minProperties: 1 }) as unknown as TPartial<TObject<T>>;

/** A comma-separated list of allowed values (`status=emitted,paid`); anything else is a 422. */
export const ValueList = (values: readonly (string | number)[], description?: string) => {
  const one = `(${values.join("|")})`;
  return t.String({ pattern: `^${one}(,${one})*$`, description: description ?? `Comma-separated: ${values.join(", ")}` });
};

export const DateFilters = {
  date_from: t.Optional(t.String({ format: "date", description: "Inclusive, clinic time zone" })),
  date_to: t.Optional(t.String({ format: "date", description: "Inclusive, clinic time zone" })),
};
