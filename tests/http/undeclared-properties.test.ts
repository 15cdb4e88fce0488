/** Which body properties count as undeclared, for schema shapes no route has yet (unions, records, opaque objects). */
import { expect, test } from "bun:test";
import { t } from "elysia";
import { undeclaredProperties, type ObjectShape } from "../../src/http/json-schema";

const check = (schema: unknown, value: unknown) => undeclaredProperties(schema as ObjectShape, value, "body");

test("nested objects and arrays of objects name the full path", () => {
  const schema = t.Object({ name: t.String(), items: t.Array(t.Object({ qty: t.Integer(), note: t.Optional(t.Object({ text: t.String() })) })) });
  expect(check(schema, { name: "a", items: [{ qty: 1 }, { qty: 2, extra: 1, note: { text: "x", more: 2 } }], other: 3 })).toEqual(["body.items.1.extra", "body.items.1.note.more", "body.other"]);
});

test("a union refuses only what no branch declares", () => {
  const schema = t.Union([t.Object({ kind: t.Literal("a"), a: t.String() }), t.Object({ kind: t.Literal("b"), b: t.String() })]);
  expect(check(schema, { kind: "a", b: "x" })).toEqual([]);
  expect(check(schema, { kind: "a", c: "x" })).toEqual(["body.c"]);
  expect(check(t.Nullable(t.Object({ a: t.String() })), { a: "x", z: 1 })).toEqual(["body.z"]);
});

test("records and opaque objects stay open; scalars have no properties", () => {
  expect(check(t.Object({ tags: t.Record(t.String(), t.String()) }), { tags: { anything: "x" } })).toEqual([]);
  expect(check(t.Object({ data: t.Unknown() }), { data: { anything: 1 } })).toEqual([]);
  expect(check(t.Unknown(), { anything: 1 })).toEqual([]);
  expect(check(t.Object({ a: t.String() }, { additionalProperties: true }), { b: 1 })).toEqual([]);
  expect(check(t.Object({ a: t.String() }), "text")).toEqual([]);
});

test("stops at the limit", () => {
  const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, i]));
  expect(check(t.Object({}), many)).toHaveLength(20);
});

test("names an object inherits (__proto__, constructor, toString) are undeclared like any other", () => {
  const body = JSON.parse('{"a":"x","__proto__":{"b":1},"constructor":1,"toString":2}');
  expect(check(t.Object({ a: t.String() }), body)).toEqual(["body.__proto__", "body.constructor", "body.toString"]);
});
