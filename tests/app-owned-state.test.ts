import { expect, test } from "bun:test";
import { Glob } from "bun";

/**
 * Every cache and memory belongs to an object `createApp` builds, so two apps in one process
 * share nothing: no source file keeps mutable state at module level. Read-only lookup tables
 * are allowed when their type says so (`ReadonlySet`, `ReadonlyMap`).
 */
test("no module-level mutable state in src/", async () => {
  const offenders: string[] = [];
  const mutableAtTopLevel = /^(export )?(let|var) |^(export )?const \w+ = new (Map|WeakMap|Set|WeakSet|LruMap|Array)\b|^(export )?const \w+(: [\w<>, ]+)? = \[\];?$/;
  for await (const file of new Glob("src/**/*.ts").scan(".")) {
    const lines = (await Bun.file(file).text()).split("\n");
    lines.forEach((line, index) => {
      if (mutableAtTopLevel.test(line)) offenders.push(`${file}:${index + 1}: ${line.trim()}`);
    });
  }
  expect(offenders, offenders.join("\n")).toEqual([]);
});
