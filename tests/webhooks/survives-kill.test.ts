import { expect, test } from "bun:test";
import { call, startServer, type ServerProcess } from "../helpers/server-process";
import { useServerStore } from "../helpers/server-store";

const store = useServerStore("webhooks-kill");
const serverEnv = () => store.env({ WEBHOOK_ALLOWED_NETWORKS: "127.0.0.1/32", WEBHOOK_RETRY_SCHEDULE: "0s,1s,1s,1s,1s,1s", WEBHOOK_TIMEOUT_MS: "1000" });

const kill = async (server: ServerProcess) => {
  process.kill(server.pid, "SIGKILL");
  while (true) {
    try {
      process.kill(server.pid, 0);
      await Bun.sleep(20);
    } catch {
      return;
    }
  }
};

test("events pending when the server is killed are delivered by the next one", async () => {
  // The receiver holds every request until released: the first server dies with attempts in flight.
  let holding = true;
  const held: (() => void)[] = [];
  const received = new Map<string, number>();
  const receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const id = request.headers.get("webhook-id")!;
      if (holding) {
        await new Promise<void>((release) => held.push(release));
        return new Response("late", { status: 503 });
      }
      received.set(id, (received.get(id) ?? 0) + 1);
      return new Response("ok");
    },
  });
  try {
    const first = await startServer(serverEnv());
    const owner = await call(first.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "kill@clinic.test", password: "a long password", name: "K", clinic_name: "Kill" } });
    expect(owner.status, owner.text).toBe(201);
    const token = owner.body.access_token;
    const hook = await call(first.baseUrl, "POST", "/api/v1/webhooks", { token, json: { url: `http://127.0.0.1:${receiver.port}/hook`, events: ["tutor.created"] } });
    expect(hook.status, hook.text).toBe(201);
    for (let i = 0; i < 5; i++) expect((await call(first.baseUrl, "POST", "/api/v1/tutors", { token, json: { name: `T${i}` } })).status).toBe(201);
    const until = Date.now() + 10_000;
    while (held.length === 0 && Date.now() < until) await Bun.sleep(20);
    expect(held.length).toBeGreaterThan(0);
    await kill(first);
    holding = false;
    for (const release of held) release();

    const second = await startServer(serverEnv());
    const deadline = Date.now() + 30_000;
    while (received.size < 5 && Date.now() < deadline) await Bun.sleep(100);
    expect(received.size).toBe(5);
    await second.stop("SIGTERM");
  } finally {
    receiver.stop(true);
  }
}, 60_000);
