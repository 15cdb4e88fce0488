/** The first run from an empty data directory (or an empty PostgreSQL database), as an operator sees it. */
import { expect, test } from "bun:test";
import { call, startServer } from "../helpers/server-process";
import { useServerStore } from "../helpers/server-store";

const store = useServerStore("first-run");

test("an empty install prints a one-time setup link (log and plain stdout); it creates the first account once; the next start prints none", async () => {
  const first = await startServer(store.env({ REGISTRATION: "closed" }));
  try {
    const logged = first.lines.map((line) => { try { return JSON.parse(line) as Record<string, unknown>; } catch { return {}; } }).find((line) => typeof line.setup_url === "string");
    expect(logged, first.lines.join("\n")).toBeDefined();
    const setupUrl = new URL(String(logged!.setup_url));
    expect(setupUrl.pathname).toBe("/setup");
    const token = setupUrl.hash.slice(1);
    expect(token.length).toBeGreaterThanOrEqual(40);
    expect(first.lines.some((line) => line.startsWith("First run: open ") && line.includes(`/setup#${token}`))).toBe(true);

    const page = await fetch(`${first.baseUrl}/setup`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect((await call(first.baseUrl, "GET", "/api/v1/auth/setup")).body).toEqual({ needed: true, registration: "closed" });
    const registered = await call(first.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "someone@else.test", password: "a long password", name: "S", clinic_name: "Squatter" } });
    expect(registered.status).toBe(403);
    expect(registered.body.code).toBe("REGISTRATION_CLOSED");

    const form = { token, clinic_name: "Los Aromos", name: "Carolina", email: "owner@aromos.cl", password: "a long password" };
    const created = await call(first.baseUrl, "POST", "/api/v1/auth/setup", { json: form });
    expect(created.status, created.text).toBe(201);
    expect(created.body.user).toMatchObject({ role: "owner", is_admin: true });
    expect((await call(first.baseUrl, "POST", "/api/v1/auth/setup", { json: { ...form, email: "again@aromos.cl" } })).status).toBe(403);
  } finally {
    expect(await first.stop()).toBe(0);
  }
  const second = await startServer(store.env({ REGISTRATION: "closed" }));
  try {
    expect(second.lines.some((line) => line.includes("setup_url") || line.startsWith("First run"))).toBe(false);
  } finally {
    expect(await second.stop()).toBe(0);
  }
}, 120_000);
