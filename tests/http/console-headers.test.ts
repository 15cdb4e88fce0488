import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../helpers/app";

/** The console page (the consent page is one of its hash routes) and its bundle, with their headers. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function expectProtected(headers: Headers) {
  const policy = headers.get("content-security-policy") ?? "";
  const directives = new Map(policy.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values.join(" ")]));
  expect(directives.get("default-src"), policy).toBe("'self'");
  expect(directives.get("script-src"), policy).toBe("'self'");
  expect(directives.get("style-src"), policy).toBe("'self'");
  expect(directives.get("frame-ancestors"), policy).toBe("'none'");
  expect(headers.get("x-content-type-options")).toBe("nosniff");
  expect(headers.get("referrer-policy")).toBe("no-referrer");
  expect(headers.get("x-frame-options")).toBe("DENY");
}

test("GET / sends the console with its Content-Security-Policy, nosniff and no-referrer", async () => {
  const page = await t.request("GET", "/");
  expect(page.status, page.text).toBe(200);
  expect(page.headers.get("content-type")).toContain("text/html");
  expect(page.text).toContain('<div id="app">');
  expectProtected(page.headers);
  // No inline script or style: everything the policy must allow comes from the service itself.
  expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle="/);
});

test("the page's script and stylesheet are served by the app, with the same headers", async () => {
  const page = await t.request("GET", "/");
  const script = /<script type="module"[^>]* src="([^"]+)"/.exec(page.text)?.[1];
  const stylesheet = /<link rel="stylesheet"[^>]* href="([^"]+)"/.exec(page.text)?.[1];
  expect(script, page.text).toStartWith("/console/");
  expect(stylesheet, page.text).toStartWith("/console/");
  const js = await t.request("GET", script!);
  expect(js.status).toBe(200);
  expect(js.headers.get("content-type")).toContain("javascript");
  expect(js.text.length).toBeGreaterThan(10_000);
  expectProtected(js.headers);
  const css = await t.request("GET", stylesheet!);
  expect(css.status).toBe(200);
  expect(css.headers.get("content-type")).toContain("text/css");
  expect(css.headers.get("x-content-type-options")).toBe("nosniff");
});

test("a path under /console that the bundle does not have is the envelope's 404", async () => {
  const missing = await t.request<{ code: string }>("GET", "/console/chunk-nothing.js");
  expect(missing.status).toBe(404);
  expect(missing.body.code).toBe("NOT_FOUND");
});
