import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { createTestApp, type TestApp } from "../helpers/app";

/**
 * The documentation is checked against the code it describes: links resolve (files and the
 * headings they point at), every environment variable the configuration reads is documented in
 * docs/configuration.md and in `--help`, and every route of /openapi.json is named in a doc.
 */
const root = resolve(import.meta.dir, "../..");
const docsDir = join(root, "docs");
const docFiles = [join(root, "README.md"), ...readdirSync(docsDir).filter((name) => name.endsWith(".md")).map((name) => join(docsDir, name))];
const read = (file: string) => readFileSync(file, "utf8");

/** Text outside fenced code blocks (a link in a code sample is not a link). */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, "");

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = match[1]!
      .toLowerCase()
      .replace(/<[^>]+>/g, "")
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

function linksOf(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

test("every relative link in README.md and docs/ resolves, to a file and to a heading in it", () => {
  const broken: string[] = [];
  for (const file of docFiles) {
    for (const link of linksOf(read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: …
      const [target = "", anchor] = link.split("#");
      const targetFile = target === "" ? file : resolve(dirname(file), decodeURIComponent(target));
      const where = `${relative(root, file)} → ${link}`;
      if (!existsSync(targetFile)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor && statSync(targetFile).isFile() && targetFile.endsWith(".md") && !anchorsOf(read(targetFile)).has(anchor)) broken.push(`${where}: no such heading`);
    }
  }
  expect(broken).toEqual([]);
});

test("README.md fits on a few screens and links every docs/ file", () => {
  const readme = read(join(root, "README.md"));
  expect(readme.split("\n").length).toBeLessThanOrEqual(250);
  const linked = new Set(linksOf(readme).map((link) => link.split("#")[0]));
  const unlinked = readdirSync(docsDir).filter((name) => name.endsWith(".md") && !linked.has(`docs/${name}`));
  expect(unlinked).toEqual([]);
  expect(readme).toContain("bun install && bun run start");
  expect(readme).toContain("bun test");
});

/** Every variable name src/config.ts reads: `env.NAME`, `env["NAME"]` and helpers called with `(env, …, "NAME")`. */
function variablesReadByConfig(): string[] {
  const source = read(join(root, "src/config.ts"));
  const names = new Set<string>();
  for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|\benv\[\s*"([A-Z][A-Z0-9_]+)"\s*\]|\(\s*env\s*,[^)]*?"([A-Z][A-Z0-9_]+)"/g)) {
    names.add((match[1] ?? match[2] ?? match[3])!);
  }
  return [...names].sort();
}

test("every environment variable src/config.ts reads is documented in docs/configuration.md and in --help", async () => {
  const variables = variablesReadByConfig();
  // The scan itself must find what the configuration is known to read.
  expect(variables).toEqual(expect.arrayContaining(["DATABASE_URL", "JWT_SECRET", "SECRETS_KEY", "PUBLIC_URL", "WEBHOOK_TIMEOUT_MS", "BACKUP_KEEP"]));
  const configuration = read(join(docsDir, "configuration.md"));
  const documentedRows = new Set([...configuration.matchAll(/^\|([^|]+)\|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((n) => n[1]!)));
  expect(variables.filter((name) => !documentedRows.has(name))).toEqual([]);

  const help = Bun.spawnSync(["bun", join(root, "src/index.ts"), "--help"], { cwd: root, env: { ...process.env, DATABASE_URL: "" } });
  expect(help.exitCode).toBe(0);
  const helpText = help.stdout.toString();
  expect(variables.filter((name) => !new RegExp(`\\b${name}\\b`).test(helpText))).toEqual([]);
  // The backup commands too.
  for (const command of ["backup", "restore", "move --to", "move --from"]) expect(helpText).toContain(command);
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test("every route in /openapi.json is named in a doc", async () => {
  const spec = await t.request<{ paths: Record<string, unknown> }>("GET", "/openapi.json");
  expect(spec.status).toBe(200);
  // A path is named when it appears as written, or relative to /api/v1 as the API's tables write it;
  // parameter names may differ ({id} and {invoice_id} both name one segment).
  const normalize = (text: string) => text.replace(/\{[^}/\s`]*\}/g, "{}");
  const docs = normalize(docFiles.map(read).join("\n"));
  const named = (path: string) => {
    const candidates = [path, path.replace(/^\/api\/v1(?=\/)/, "")].map(normalize);
    return candidates.some((candidate) => new RegExp(`${candidate.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w/{-])`).test(docs));
  };
  const paths = Object.keys(spec.body.paths);
  expect(paths.length).toBeGreaterThan(50);
  expect(paths.filter((path) => !named(path))).toEqual([]);
});
