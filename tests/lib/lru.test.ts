import { expect, test } from "bun:test";
import { LruMap } from "../../src/lib/lru";

test("keeps at most `limit` entries and forgets the least recently used first", () => {
  const cache = new LruMap<string, number>(2);
  cache.set("a", 1);
  cache.set("b", 2);
  expect(cache.get("a")).toBe(1); // "a" is now the most recent
  cache.set("c", 3);
  expect(cache.size).toBe(2);
  expect(cache.has("b")).toBe(false);
  expect([cache.get("a"), cache.get("c")]).toEqual([1, 3]);
});

test("touch says whether the key was there before, and keeps it fresh", () => {
  const seen = new LruMap<string, true>(2);
  expect(seen.touch("x", true)).toBe(false);
  expect(seen.touch("x", true)).toBe(true);
  seen.touch("y", true);
  seen.touch("x", true);
  seen.touch("z", true); // evicts "y", the least recently touched
  expect([seen.has("x"), seen.has("y"), seen.has("z")]).toEqual([true, false, true]);
});
