import { afterAll, beforeEach, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { CursorPageBody } from "../../src/http/pagination";
import { createTestApp, type Answer, type TestApp } from "../helpers/app";
import { relogin, type ClinicSession } from "../helpers/clinic";
import { useClinicApp } from "../helpers/fixture";
import { startReceiver, type Receiver } from "./receiver";

interface WebhookBody {
  id: string;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret?: string;
}
interface DeliveryBody {
  id: string;
  event_id: string;
  event_type: string;
  state: string;
  attempts: number;
  status_code: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { config: { webhooks: { dispatch: false, retryScheduleMs: [0, 1000, 5000], allowedNetworks: ["127.0.0.1/32"], allowHttp: true, timeoutMs: 2000, dueDays: 7, dueHour: 8 } } });

let receiver: Receiver;
beforeEach(() => {
  receiver?.stop();
  receiver = startReceiver();
});
afterAll(() => receiver?.stop());

/** Verifies as a receiver would, its clock at the app's (the library checks the timestamp against now). */
const verify = (secret: string, message: { body: string; headers: Record<string, string> }) => {
  setSystemTime(t.clock.now());
  try {
    return new Webhook(secret).verify(message.body, message.headers);
  } finally {
    setSystemTime();
  }
};
const dispatcher = () => t.context.webhooks.dispatcher;
const addWebhook = async (events: string[] = ["*"], url = receiver.url) => {
  const r = await owner.as<Answer<WebhookBody>>("POST", "/api/v1/webhooks", { json: { url, events } });
  expect(r.status, r.text).toBe(201);
  return r.body as WebhookBody & { secret: string };
};
const newTutor = async (name = "Ana") => (await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name } })).body.id;
const deliveries = async (webhookId: string) => (await owner.as<CursorPageBody<DeliveryBody>>("GET", `/api/v1/webhooks/${webhookId}/deliveries`)).body.data;
const webhook = async (id: string) => (await owner.as<WebhookBody>("GET", `/api/v1/webhooks/${id}`)).body;
const drain = async () => {
  while ((await dispatcher().runOnce()) > 0);
};
const disableAll = async () => {
  const list = await owner.as<CursorPageBody<WebhookBody>>("GET", "/api/v1/webhooks?limit=200");
  for (const w of list.body.data) await owner.as("DELETE", `/api/v1/webhooks/${w.id}`);
};

describe("webhooks", () => {
  beforeEach(disableAll);

  test("an event reaches the receiver signed as Standard Webhooks says; the secret is shown once", async () => {
    const hook = await addWebhook(["tutor.created"]);
    expect(hook.secret).toMatch(/^whsec_/);
    expect(await webhook(hook.id)).not.toHaveProperty("secret");
    const tutorId = await newTutor("Signed");
    t.clock.advance(1000);
    await newTutor("Second");
    await drain();
    expect(receiver.received.length).toBe(2);
    const first = receiver.received.find((r) => JSON.parse(r.body).data.id === tutorId);
    const verified = verify(hook.secret, first!) as { type: string; timestamp: string; data: { id: string; object: string; changes: Record<string, unknown> } };
    expect(verified).toMatchObject({ type: "tutor.created", data: { object: "tutor", id: tutorId, changes: { name: { to: "Signed" } } } });
    const [event] = (await owner.as<CursorPageBody<{ id: string }>>("GET", `/api/v1/audit?entity_id=${tutorId}`)).body.data;
    expect(first!.headers["webhook-id"]).toBe(event!.id);
    const list = await deliveries(hook.id);
    expect(list.map((d) => [d.event_type, d.state, d.status_code, d.attempts])).toEqual([
      ["tutor.created", "succeeded", 200, 1],
      ["tutor.created", "succeeded", 200, 1],
    ]);
    expect(() => verify(`whsec_${Buffer.from("another secret of 24 b!!").toString("base64")}`, first!)).toThrow();
  });

  test("only subscribed actions are queued", async () => {
    const hook = await addWebhook(["invoice.emitted"]);
    await newTutor();
    await drain();
    expect(receiver.received).toEqual([]);
    expect(await deliveries(hook.id)).toEqual([]);
  });

  test("failures are retried on the schedule with the same webhook-id, then succeed", async () => {
    const hook = await addWebhook();
    receiver.answers = [{ status: 500 }, { status: 503 }, { status: 200 }];
    await newTutor();
    expect(await dispatcher().runOnce()).toBe(1);
    let [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ state: "pending", attempts: 1, status_code: 500 });
    const wait1 = new Date(delivery!.next_attempt_at!).getTime() - t.clock.now().getTime();
    expect(wait1).toBeGreaterThanOrEqual(1000);
    expect(wait1).toBeLessThanOrEqual(1100);
    t.clock.advance(wait1 - 1);
    expect(await dispatcher().runOnce()).toBe(0);
    t.clock.advance(1);
    expect(await dispatcher().runOnce()).toBe(1);
    [delivery] = await deliveries(hook.id);
    const wait2 = new Date(delivery!.next_attempt_at!).getTime() - t.clock.now().getTime();
    expect(wait2).toBeGreaterThanOrEqual(5000);
    expect(wait2).toBeLessThanOrEqual(5500);
    t.clock.advance(wait2);
    await drain();
    [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ state: "succeeded", attempts: 3, status_code: 200 });
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(receiver.received.length).toBe(3);
  });

  test("429 and 5xx wait at least what Retry-After asks; 3xx is a failure and is not followed", async () => {
    const hook = await addWebhook();
    receiver.answers = [{ status: 429, headers: { "retry-after": "120" } }, { status: 302, headers: { location: "http://169.254.169.254/" } }, { status: 200 }];
    await newTutor();
    await drain();
    let [delivery] = await deliveries(hook.id);
    expect(new Date(delivery!.next_attempt_at!).getTime() - t.clock.now().getTime()).toBeGreaterThanOrEqual(120_000);
    t.clock.advance(120_000);
    await drain();
    [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ state: "pending", status_code: 302 });
    expect(receiver.received.length).toBe(2);
  });

  test("410 disables the webhook, and the owner sees why", async () => {
    const hook = await addWebhook();
    receiver.answers = [{ status: 410 }];
    await newTutor();
    await drain();
    expect(await webhook(hook.id)).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining("410") });
    expect((await deliveries(hook.id))[0]).toMatchObject({ state: "failed", status_code: 410 });
    await newTutor();
    await drain();
    expect(receiver.received.length).toBe(1);
    expect((await owner.as("PATCH", `/api/v1/webhooks/${hook.id}`, { json: { enabled: true } })).status).toBe(200);
    expect(await webhook(hook.id)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  /** A change whose delivery fails every attempt of the test schedule (three, 5 s apart). */
  const failEveryAttempt = async () => {
    receiver.answers = [{ status: 500 }];
    await newTutor();
    for (let i = 0; i < 3; i++) {
      await drain();
      t.clock.advance(6000);
    }
  };

  test("when every attempt of the schedule fails the webhook is disabled", async () => {
    const hook = await addWebhook();
    await failEveryAttempt();
    expect((await deliveries(hook.id))[0]).toMatchObject({ state: "failed", attempts: 3, next_attempt_at: null });
    expect(await webhook(hook.id)).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining("retry schedule") });
    expect(receiver.received.length).toBe(3);
  });

  test("a failed delivery can be sent again by hand", async () => {
    const hook = await addWebhook();
    await failEveryAttempt();
    await owner.as("PATCH", `/api/v1/webhooks/${hook.id}`, { json: { enabled: true } });
    receiver.answers = [{ status: 204 }];
    const [failed] = await deliveries(hook.id);
    const retried = await owner.as<DeliveryBody>("POST", `/api/v1/webhooks/deliveries/${failed!.id}/retry`);
    expect(retried.status, retried.text).toBe(202);
    await drain();
    expect((await deliveries(hook.id))[0]).toMatchObject({ state: "succeeded", status_code: 204 });
  });

  test("test event; rotation signs with both secrets for 24 hours, then the new one alone", async () => {
    const hook = await addWebhook(["invoice.emitted"]);
    const sent = await owner.as<DeliveryBody>("POST", `/api/v1/webhooks/${hook.id}/test`);
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body).toMatchObject({ event_type: "webhook.test", state: "pending" });
    const rotated = await owner.as<WebhookBody & { secret: string }>("POST", `/api/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    await drain();
    const [message] = receiver.received;
    expect(JSON.parse(message!.body)).toMatchObject({ type: "webhook.test", data: { object: "webhook", id: hook.id } });
    expect(message!.headers["webhook-signature"]!.split(" ").length).toBe(2);
    verify(hook.secret, message!);
    verify(rotated.body.secret, message!);
    t.clock.advance(24 * 3_600_000 + 1000);
    owner = await relogin(t, owner);
    await owner.as("POST", `/api/v1/webhooks/${hook.id}/test`);
    await drain();
    const later = receiver.received[1]!;
    expect(later.headers["webhook-signature"]!.split(" ").length).toBe(1);
    verify(rotated.body.secret, later);
    expect(() => verify(hook.secret, later)).toThrow();
  });
});

describe("time-based events", () => {
  beforeEach(disableAll);

  test("each morning in the clinic's time zone, alert.due once a day for what falls due within the days set, with the tutor's phone", async () => {
    await addWebhook(["alert.due"]);
    const tutor = (await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Due", phone: "+56922222222" } })).body.id;
    const patient = (await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: tutor, name: "Firulais", species: "dog" } })).body.id;
    const day = (offset: number) => new Date(t.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    const soon = (await owner.as<{ id: string }>("POST", "/api/v1/alerts", { json: { patient_id: patient, kind: "follow_up", message: "Control", due_date: day(3) } })).body.id;
    await owner.as("POST", "/api/v1/alerts", { json: { patient_id: patient, kind: "follow_up", message: "Later", due_date: day(20) } });
    // Vaccine reminders live in the clinical record now (vaccination.due); an old-style alert is not sent twice.
    await owner.as("POST", "/api/v1/alerts", { json: { patient_id: patient, kind: "vaccine_due", message: "Rabia", due_date: day(3) } });
    // Before the morning hour (08:00 in the clinic's zone, UTC here) nothing is written.
    const morning = new Date(`${day(1)}T07:59:00Z`);
    t.clock.set(morning);
    owner = await relogin(t, owner);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBe(0);
    t.clock.advance(60_000);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBe(1);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBe(0);
    await drain();
    expect(receiver.received.length).toBe(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
      type: "alert.due",
      data: { object: "alert", id: soon, actor: { type: "system" }, changes: { due_date: day(2), patient_id: patient, tutor_phone: "+56922222222", kind: "follow_up" } },
    });
    // The next morning it is still due: one more.
    t.clock.advance(86_400_000);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBe(1);
    owner = await relogin(t, owner);
  });

  test("each morning in the clinic's time zone, vaccination.due for open due dates within the days set, with the patient, the vaccine and the tutor to call", async () => {
    await addWebhook(["vaccination.due"]);
    const tutor = (await owner.as<{ id: string; name: string }>("POST", "/api/v1/tutors", { json: { name: "Vacuna Tutor", phone: "+56933333333" } })).body.id;
    const patient = (await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: tutor, name: "Cachupín", species: "dog" } })).body.id;
    const day = (offset: number) => new Date(t.clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    const vaccinate = async (vaccine: string, diseases: string[], next_due_on: string) => {
      const r = await owner.as<{ id: string }>("POST", `/api/v1/patients/${patient}/vaccinations`, { json: { vaccine, diseases, next_due_on } });
      expect(r.status, r.text).toBe(201);
      return r.body.id;
    };
    const rabies = await vaccinate("Nobivac Rabies", ["rabies"], day(4));
    await vaccinate("Far away", ["leptospirosis"], day(30));
    const declined = await vaccinate("Declined one", ["parvovirus"], day(3));
    expect((await owner.as("PATCH", `/api/v1/vaccinations/${declined}/reminder`, { json: { reminder_status: "declined" } })).status).toBe(200);
    const closedLater = await vaccinate("Closed by a later dose", ["distemper"], day(2));
    t.clock.advance(1000);
    await vaccinate("The later dose", ["distemper"], day(60));
    // Before the morning hour (08:00 in the clinic's zone, UTC here) nothing is written.
    t.clock.set(new Date(`${day(1)}T07:59:00Z`));
    owner = await relogin(t, owner);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBe(0);
    t.clock.advance(60_000);
    // (The previous test's alert is still due too: it counts, but goes to no webhook here.)
    expect(await t.context.webhooks.dueEvents.runOnce()).toBeGreaterThanOrEqual(1);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBe(0);
    await drain();
    expect(receiver.received.length).toBe(1);
    const sent = JSON.parse(receiver.received[0]!.body);
    expect(sent).toMatchObject({
      type: "vaccination.due",
      data: {
        object: "vaccination",
        id: rabies,
        actor: { type: "system" },
        changes: { vaccination_id: rabies, patient_id: patient, patient_name: "Cachupín", vaccine: "Nobivac Rabies", due_date: day(3), reminder_status: "pending", tutor_id: tutor, tutor_name: "Vacuna Tutor", tutor_phone: "+56933333333" },
      },
    });
    expect(JSON.stringify(sent)).not.toContain(closedLater);
    // The next morning it is still due: one more; the audit trail shows who wrote it.
    t.clock.advance(86_400_000);
    expect(await t.context.webhooks.dueEvents.runOnce()).toBeGreaterThanOrEqual(1);
    owner = await relogin(t, owner);
    const audit = await owner.as<CursorPageBody<{ action: string; actor: { type: string; name: string } }>>("GET", `/api/v1/audit?entity_id=${rabies}&action=vaccination.due`);
    expect(audit.body.data.map((e) => [e.action, e.actor.type, e.actor.name])).toEqual([
      ["vaccination.due", "system", "scheduler"],
      ["vaccination.due", "system", "scheduler"],
    ]);
  });
});

describe("two instances", () => {
  beforeEach(disableAll);

  test("dispatchers of two instances on one database never send one attempt twice", async () => {
    const second = await createTestApp({ database: t.database, clock: t.clock, config: { webhooks: { dispatch: false, retryScheduleMs: [0, 1000, 5000], allowedNetworks: ["127.0.0.1/32"], allowHttp: true, timeoutMs: 2000, dueDays: 7, dueHour: 8 } } });
    try {
      await addWebhook(["tutor.created"]);
      for (let i = 0; i < 40; i++) await newTutor(`Many ${i}`);
      const rounds = async (d: typeof t.context.webhooks.dispatcher) => {
        while ((await d.runOnce()) > 0);
      };
      await Promise.all([rounds(dispatcher()), rounds(second.context.webhooks.dispatcher), rounds(dispatcher()), rounds(second.context.webhooks.dispatcher)]);
      const ids = receiver.received.map((r) => r.headers["webhook-id"]);
      expect(ids.length).toBe(40);
      expect(new Set(ids).size).toBe(40);
    } finally {
      await second.close();
    }
  });
});

describe("webhook destinations", () => {
  const refused = async (url: string) => {
    const r = await owner.as<Answer<WebhookBody>>("POST", "/api/v1/webhooks", { json: { url, events: ["*"] } });
    expect(r.status, r.text).toBe(422);
    expect(r.body.message).toContain(url);
    return r.body.message!;
  };

  test("loopback, private, link-local (cloud metadata) and names resolving to them are refused with 422 naming the URL", async () => {
    const before = await t.count("webhook_endpoints");
    t.context.webhooks.destinations.resolveHost = async (name) => (name === "internal.test" ? [{ address: "10.0.0.7", family: 4 }] : name === "receiver.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
    expect(await refused("http://127.0.0.2/hook")).toContain("loopback");
    expect(await refused("http://[::1]/hook")).toContain("loopback");
    expect(await refused("http://10.1.2.3/hook")).toContain("private");
    expect(await refused("http://192.168.0.10/hook")).toContain("private");
    expect(await refused("http://169.254.169.254/latest/meta-data")).toContain("link-local");
    expect(await refused("http://internal.test/hook")).toContain("10.0.0.7");
    expect(await refused("http://nowhere.test/hook")).toContain("does not resolve");
    expect(await refused("ftp://example.com/hook")).toContain("https");
    expect(await t.count("webhook_endpoints")).toBe(before);
  });

  test("a name is connected to at the address that was checked, and sent as Host", async () => {
    let answers = 0;
    t.context.webhooks.destinations.resolveHost = async () => (answers++ === 0 ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "127.0.0.1", family: 4 }]);
    const hook = await addWebhook(["tutor.created"], `http://receiver.test:${receiver.port}/hook`);
    await newTutor();
    await drain();
    t.clock.advance(1000);
    expect(receiver.received[0]!.host).toBe(`receiver.test:${receiver.port}`);
    // A later answer pointing elsewhere (DNS rebinding) is checked again before sending.
    t.context.webhooks.destinations.resolveHost = async () => [{ address: "169.254.169.254", family: 4 }];
    await newTutor();
    await drain();
    expect(receiver.received.length).toBe(1);
    expect((await deliveries(hook.id))[0]).toMatchObject({ state: "pending", error: expect.stringContaining("169.254.169.254") });
  });
});
