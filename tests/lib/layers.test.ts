/**
 * The layering rules read from the source: no import cycle anywhere in src/, and src/lib/ imports
 * nothing from src/ outside itself (it sits below http/, modules/, backup/, db/ and config.ts).
 * Type-only imports count: a cycle through `import type` still ties the modules' designs together,
 * and they are exactly the edges Bun.Transpiler's scanImports drops, so the imports are read with
 * TypeScript's own pre-processor (every `import`, `import type`, `export … from`, `import()`).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const SRC = resolve(import.meta.dir, "../../src");
const SOURCE_FILE = /\.(ts|tsx)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE_FILE.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file a relative specifier names, as the bundler resolves it (extension optional, a folder's index). */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier.replace(/\.js$/, ""));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx")]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Every file of src/ with the files of src/ it imports, type-only imports included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => resolveSpecifier(file, specifier))
      .filter((target): target is string => target !== undefined && target.startsWith(`${SRC}/`));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import cycles, one per strongly connected component (Tarjan), each as a path that closes on itself. */
function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || graph.get(file)?.includes(file)) components.push(component);
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  // Name each component by one concrete cycle through it: a breadth-first path back to its first member.
  return components.map((component) => {
    const members = new Set(component);
    const start = [...members].sort()[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const target of graph.get(file) ?? []) {
        if (!members.has(target)) continue;
        if (target === start) {
          const path = [file];
          while (path[0] !== start) path.unshift(previous.get(path[0]!)!);
          return [...path, start];
        }
        if (!previous.has(target)) {
          previous.set(target, file);
          queue.push(target);
        }
      }
    }
    return [start, start];
  });
}

const name = (file: string) => relative(SRC, file);
const graph = importGraph();

describe("the import graph of src/", () => {
  test("is read with imports in type positions too", () => {
    expect(graph.size).toBeGreaterThan(50);
    // src/db/client.ts names ../lib/clock only inside a type, `import("../lib/clock").Clock`.
    expect(graph.get(join(SRC, "db/client.ts"))).toContain(join(SRC, "lib/clock.ts"));
  });

  test("has no cycle", () => {
    expect(importCycles(graph).map((cycle) => cycle.map(name).join(" → "))).toEqual([]);
  });

  test("src/lib/ imports nothing outside src/lib/", () => {
    const upward = [...graph]
      .filter(([file]) => name(file).startsWith("lib/"))
      .flatMap(([file, targets]) => targets.filter((target) => !name(target).startsWith("lib/")).map((target) => `${name(file)} → ${name(target)}`));
    expect(upward).toEqual([]);
  });
});

describe("the cycle finder", () => {
  test("finds a cycle through three files and a file importing itself, and nothing in a chain", () => {
    const cycles = importCycles(
      new Map([
        ["config.ts", ["backup/store.ts"]],
        ["backup/store.ts", ["lib/logger.ts"]],
        ["lib/logger.ts", ["config.ts"]],
        ["a.ts", ["a.ts", "b.ts"]],
        ["b.ts", ["c.ts"]],
        ["c.ts", []],
      ]),
    );
    expect(cycles).toContainEqual(["backup/store.ts", "lib/logger.ts", "config.ts", "backup/store.ts"]);
    expect(cycles).toContainEqual(["a.ts", "a.ts"]);
    expect(cycles).toHaveLength(2);
  });
});
