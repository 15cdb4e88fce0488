import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { GENERATED_PATH, renderEmbeddedMigrations } from "../../scripts/embed-migrations";

test("the embedded migrations match drizzle/ (run `bun run db:generate` after schema changes)", () => {
  expect(readFileSync(GENERATED_PATH, "utf8")).toBe(renderEmbeddedMigrations());
});
