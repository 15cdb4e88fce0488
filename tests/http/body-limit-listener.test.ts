/** Over a real listener (not only app.handle), an oversized body gets the envelope and X-Request-ID. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { listenerOptions } from "../../src/app";
import { createTestApp, testConfig, type TestApp } from "../helpers/app";

const LIMIT = 4096;
let t: TestApp;
let baseUrl: string;

beforeAll(async () => {
  t = await createTestApp({ config: { maxBodyBytes: LIMIT } });
  t.app.listen(listenerOptions(testConfig({ maxBodyBytes: LIMIT, port: 0 })));
  baseUrl = `http://127.0.0.1:${t.app.server!.port}`;
});
afterAll(async () => {
  await t.app.stop(true);
  await t.close();
});

async function expectEnvelope413(response: Response) {
  const text = await response.text();
  expect(response.status, text).toBe(413);
  const body = JSON.parse(text);
  expect(body.code).toBe("PAYLOAD_TOO_LARGE");
  expect(response.headers.get("x-request-id"), text).toBe(body.request_id);
}

test("a body over MAX_BODY_BYTES with a Content-Length", async () => {
  const body = JSON.stringify({ email: "a@b.cl", password: "x".repeat(LIMIT * 4) });
  await expectEnvelope413(await fetch(`${baseUrl}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body }));
});

test("a chunked body with no Content-Length is cut as soon as it passes the limit", async () => {
  const chunk = new TextEncoder().encode("x".repeat(1024));
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= 64) return controller.close();
      sent++;
      controller.enqueue(chunk);
    },
  });
  await expectEnvelope413(await fetch(`${baseUrl}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: stream }));
});

test("a body far over the limit (10 MB) is still the envelope", async () => {
  const body = "x".repeat(10 * 1024 * 1024);
  await expectEnvelope413(await fetch(`${baseUrl}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body }));
});
