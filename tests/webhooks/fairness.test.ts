import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic, type ClinicSession } from "../helpers/clinic";
import { startReceiver, type Receiver } from "./receiver";

/** One attempt's timeout in these tests. */
const TIMEOUT_MS = 2000;

/** A receiver that accepts connections and never answers: every attempt to it lasts the whole timeout. */
function startTarpit(): Promise<{ url: string; stop(): void; connections: () => number }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        connections: () => accepted,
        stop: () => {
          for (const socket of sockets) socket.destroy();
          server.close();
        },
      });
    }),
  );
}

let t: TestApp;
let tarpit: Awaited<ReturnType<typeof startTarpit>>;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp({ config: { webhooks: { dispatch: false, retryScheduleMs: [0, 60_000], allowedNetworks: ["127.0.0.1/32"], allowHttp: true, timeoutMs: TIMEOUT_MS, dueDays: 7, dueHour: 8 } } });
  tarpit = await startTarpit();
  receiver = startReceiver();
}, 30_000);
afterEach(() => t.context.webhooks.dispatcher.stop());
afterAll(async () => {
  tarpit.stop();
  receiver.stop();
  await t.close();
});

const addWebhook = async (session: ClinicSession, url: string, events = ["tutor.created"]) => {
  const r = await session.as<{ id: string }>("POST", "/api/v1/webhooks", { json: { url, events } });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
};
const newTutor = async (session: ClinicSession, name: string) => expect((await session.as("POST", "/api/v1/tutors", { json: { name } })).status).toBe(201);

/** Resolves with the milliseconds from now until the receiver has `count` messages. */
const untilReceived = (count: number) => {
  const started = performance.now();
  return new Promise<number>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`the receiver had ${receiver.received.length} of ${count} after 20 s`)), 20_000);
    const check = () => {
      if (receiver.received.length >= count) {
        clearTimeout(deadline);
        resolve(performance.now() - started);
      } else setTimeout(check, 5);
    };
    check();
  });
};

test("a clinic whose every webhook is a tarpit delays another clinic's delivery by less than one attempt's timeout", async () => {
  const flooding = await registerClinic(t);
  for (let i = 0; i < 20; i++) await addWebhook(flooding, tarpit.url);
  // 20 webhooks × 12 changes: 240 deliveries queued before the other clinic's one.
  for (let i = 0; i < 12; i++) await newTutor(flooding, `Flood ${i}`);
  const other = await registerClinic(t);
  await addWebhook(other, receiver.url);
  await t.context.webhooks.dispatcher.start();
  // The flooding clinic's attempts are hanging on the tarpit now.
  while (tarpit.connections() === 0) await Bun.sleep(5);
  await newTutor(other, "Puntual");
  const waited = await untilReceived(1);
  expect(JSON.parse(receiver.received[0]!.body).type).toBe("tutor.created");
  expect(waited).toBeLessThan(TIMEOUT_MS);
  // The flood holds at most its clinic's share of the slots, never all of them.
  expect(tarpit.connections()).toBeLessThanOrEqual(16);
}, 60_000);

test("an attempt never waits for the slowest of those claimed with it", async () => {
  const clinic = await registerClinic(t);
  await addWebhook(clinic, tarpit.url);
  await addWebhook(clinic, receiver.url);
  const before = receiver.received.length;
  await t.context.webhooks.dispatcher.start();
  const hanging = tarpit.connections();
  await newTutor(clinic, "Primero");
  await untilReceived(before + 1);
  while (tarpit.connections() === hanging) await Bun.sleep(5);
  // The first change's attempt to the tarpit is still open: the second change is sent without waiting for it.
  await newTutor(clinic, "Segundo");
  expect(await untilReceived(before + 2)).toBeLessThan(TIMEOUT_MS / 2);
}, 30_000);
