import type { TestApp } from "./app";
import type { ClinicSession } from "./clinic";

/**
 * Every protected REST route, for the shared security suite (tests/security.test.ts).
 * Adding a route to the app without adding it here fails that suite.
 */
export interface ProtectedRoute {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path under /api/v1; `:id` is replaced by the id `seed` returns. */
  path: string;
  /** Roles allowed; absent means every role of the clinic. */
  roles?: readonly ("owner" | "vet" | "staff")[];
  /** A valid body, so that a refusal is about who asks and not about what they sent. */
  body?: (seeded: string | undefined) => unknown;
  /** Creates a record in the owner's clinic and returns its id (for `:id` routes). */
  seed?: (t: TestApp, owner: ClinicSession) => Promise<string>;
  /** The GET path that shows the seeded record (default: `path`), to check a refusal changed nothing. */
  readBack?: string;
}

const seedUser = async (_t: TestApp, owner: ClinicSession) => {
  const r = await owner.as("POST", "/api/v1/users", {
    json: { email: `seed.${Bun.randomUUIDv7()}@clinic.test`, name: "Seeded", role: "staff", password: "seeded password" },
  });
  return r.body.id as string;
};

const seedApiKey = async (_t: TestApp, owner: ClinicSession) => {
  const r = await owner.as("POST", "/api/v1/mcp/keys", { json: { name: "seeded", scopes: ["read"] } });
  return r.body.id as string;
};

export const PROTECTED_ROUTES: ProtectedRoute[] = [
  { method: "POST", path: "/mcp/keys", roles: ["owner"], body: () => ({ name: "k", scopes: ["read"] }) },
  { method: "GET", path: "/mcp/keys", roles: ["owner"] },
  { method: "GET", path: "/mcp/keys/:id", roles: ["owner"], seed: seedApiKey },
  { method: "POST", path: "/mcp/keys/:id/rotate", roles: ["owner"], seed: seedApiKey, readBack: "/mcp/keys/:id" },
  { method: "DELETE", path: "/mcp/keys/:id", roles: ["owner"], seed: seedApiKey },
  { method: "GET", path: "/mcp/usage", roles: ["owner"] },
  { method: "GET", path: "/mcp/usage/summary", roles: ["owner"] },
  { method: "POST", path: "/auth/logout" },
  { method: "GET", path: "/auth/me" },
  { method: "GET", path: "/users", roles: ["owner"] },
  { method: "POST", path: "/users", roles: ["owner"], body: () => ({ email: `x.${Bun.randomUUIDv7()}@clinic.test`, name: "X", role: "vet", password: "0123456789" }) },
  { method: "GET", path: "/users/:id", roles: ["owner"], seed: seedUser },
  { method: "PATCH", path: "/users/:id", roles: ["owner"], seed: seedUser, body: () => ({ name: "Renamed" }) },
  { method: "DELETE", path: "/users/:id", roles: ["owner"], seed: seedUser },
];

/** REST routes that need no access token. */
export const PUBLIC_ROUTES = ["POST /auth/register", "POST /auth/login", "POST /auth/refresh"];
