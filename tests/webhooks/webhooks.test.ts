import { afterAll, beforeEach, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { CursorPageBody } from "../../src/http/pagination";
import { createTestApp, type Answer, type TestApp } from "../helpers/app";
import { WEBHOOK_FIELDS } from "../../src/modules/webhooks/payload";
import { registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
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
    const verified = verify(hook.secret, first!) as { type: string; timestamp: string; data: { id: string; object: string; changed: string[] } };
    expect(verified).toMatchObject({ type: "tutor.created", data: { object: "tutor", id: tutorId, changed: ["name"], fields: {} } });
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

describe("thin payloads", () => {
  beforeEach(disableAll);

  test("a tutor's free text and personal data never leave: the receiver gets ids, the event type and the changed fields' names", async () => {
    const hook = await addWebhook(["tutor.created", "tutor.updated", "visit.created"]);
    const personal = { name: "Ana Privada", email: "ana.privada@example.com", phone: "+56911112222", national_id: "12.345.678-5", address: "Calle Secreta 123", notes: "Paga siempre tarde; no llamar después de las 20 h" };
    const created = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: personal });
    expect(created.status, created.text).toBe(201);
    expect((await owner.as("PATCH", `/api/v1/tutors/${created.body.id}`, { json: { notes: "Otra nota privada" } })).status).toBe(200);
    const patient = (await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: created.body.id, name: "Toby", species: "dog" } })).body.id;
    const visit = await owner.as<{ id: string }>("POST", "/api/v1/visits", { json: { patient_id: patient, reason: "Vómitos desde ayer", scheduled_at: "2026-01-16T10:00:00Z" } });
    expect(visit.status, visit.text).toBe(201);
    await drain();
    const bodies = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { id: string; changed: string[]; fields: Record<string, unknown>; actor: Record<string, unknown> } });
    expect(bodies.map((b) => b.type).sort()).toEqual(["tutor.created", "tutor.updated", "visit.created"]);
    const everything = receiver.received.map((r) => r.body).join("\n");
    for (const value of [...Object.values(personal), "Otra nota privada", "Vómitos desde ayer", owner.user.email]) expect(everything).not.toContain(value);
    const tutorCreated = bodies.find((b) => b.type === "tutor.created")!;
    expect(tutorCreated.data).toMatchObject({ id: created.body.id, fields: {} });
    expect(tutorCreated.data.changed.sort()).toEqual(["address", "email", "name", "national_id", "notes", "phone"]);
    expect(Object.keys(tutorCreated.data.actor).sort()).toEqual(["id", "type"]);
    expect(bodies.find((b) => b.type === "tutor.updated")!.data).toMatchObject({ changed: ["notes"], fields: {} });
    const visitCreated = bodies.find((b) => b.type === "visit.created")!;
    expect(visitCreated.data).toMatchObject({ id: visit.body.id, fields: { patient_id: patient, status: expect.any(String) } });
    expect(visitCreated.data.changed).toContain("reason");
    expect((await deliveries(hook.id)).length).toBe(3);
  });

  test("every kind of record the event log writes has its webhook fields listed, and none of them is free text or personal data", async () => {
    const attached = await t.database.query<{ entity: string }>(
      "select distinct split_part(encode(tgargs, 'escape'), '\\000', 1) as entity from pg_trigger where tgname = 'audit_change' order by 1",
    );
    expect(attached.length).toBeGreaterThan(10);
    for (const { entity } of attached) expect(WEBHOOK_FIELDS, entity).toHaveProperty(entity);
    const forbidden = /name$|email|phone|national_id|rut|address|notes?$|reason|message|description|text|instructions|subjective|objective|assessment|plan$|diagnos|url|secret|key|hash|xml|pem|dose/;
    for (const [entity, fields] of Object.entries(WEBHOOK_FIELDS)) for (const field of fields) if (forbidden.test(field) && !(entity === "mcp_report" && field === "name") && !(entity === "clinic" && field === "plan")) throw new Error(`${entity}.${field} looks like free text or personal data`);
  });

  test("the documentation lists each kind of record's webhook fields as the code sends them", async () => {
    const docs = await Bun.file(new URL("../../docs/webhooks-and-audit.md", import.meta.url)).text();
    for (const [entity, fields] of Object.entries(WEBHOOK_FIELDS)) {
      const row = docs.split("\n").find((line) => line.startsWith(`| \`${entity}\` |`));
      expect(row, entity).toBeDefined();
      expect([...row!.split("|")[2]!.matchAll(/^ *`([a-z_]+)`|, `([a-z_]+)`/g)].map((m) => m[1] ?? m[2]), entity).toEqual([...fields]);
    }
  });
});

describe("the attempt log", () => {
  beforeEach(disableAll);

  test("every attempt is listed, newest first, with its status code, duration, error and time", async () => {
    const hook = await addWebhook(["tutor.created"]);
    receiver.answers = [{ status: 500 }, { status: 503 }, { status: 200 }];
    await newTutor();
    const times: string[] = [];
    for (let i = 0; i < 3; i++) {
      times.push(t.clock.now().toISOString().replace(/\.000Z$/, "Z"));
      await drain();
      t.clock.advance(6000);
    }
    const [delivery] = await deliveries(hook.id);
    expect(delivery).toMatchObject({ state: "succeeded", attempts: 3, status_code: 200 });
    const detail = await owner.as<DeliveryBody & { attempt_log: { attempt: number; attempted_at: string; status_code: number | null; duration_ms: number | null; error: string | null }[] }>("GET", `/api/v1/webhooks/deliveries/${delivery!.id}/attempts`);
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body).toMatchObject({ id: delivery!.id, state: "succeeded", attempts: 3 });
    expect(detail.body.attempt_log.map((a) => [a.attempt, a.status_code, a.error, a.attempted_at])).toEqual([
      [3, 200, null, times[2]!],
      [2, 503, "the receiver answered 503", times[1]!],
      [1, 500, "the receiver answered 500", times[0]!],
    ]);
    for (const a of detail.body.attempt_log) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    // Another clinic's owner cannot read it.
    const stranger = await registerClinic(t);
    expect((await stranger.as("GET", `/api/v1/webhooks/deliveries/${delivery!.id}/attempts`)).status).toBe(404);
  });
});

describe("limits", () => {
  beforeEach(disableAll);

  test("a clinic has at most WEBHOOK_MAX_ENDPOINTS webhooks (20 by default): the next is refused with 409 in the envelope and nothing is written", async () => {
    for (let i = 0; i < 20; i++) await addWebhook(["tutor.created"]);
    const before = await t.count("webhook_endpoints");
    const refused = await owner.as<Answer<WebhookBody>>("POST", "/api/v1/webhooks", { json: { url: receiver.url, events: ["*"] } });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({ error: "conflict", code: "CONFLICT", details: { limit: 20 } });
    expect(refused.body.message).toContain("WEBHOOK_MAX_ENDPOINTS");
    expect(await t.count("webhook_endpoints")).toBe(before);
    // A deleted webhook frees its place; another clinic has its own 20.
    const list = await owner.as<CursorPageBody<WebhookBody>>("GET", "/api/v1/webhooks?limit=200");
    await owner.as("DELETE", `/api/v1/webhooks/${list.body.data[0]!.id}`);
    await addWebhook(["tutor.created"]);
    const stranger = await registerClinic(t);
    expect((await stranger.as("POST", "/api/v1/webhooks", { json: { url: receiver.url, events: ["*"] } })).status).toBe(201);
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
      data: { object: "alert", id: soon, actor: { type: "system" }, changed: [], fields: { due_date: day(2), patient_id: patient, tutor_phone: "+56922222222", kind: "follow_up" } },
    });
    // The alert's message is free text: the receiver fetches the alert if it needs it.
    expect(receiver.received[0]!.body).not.toContain("Control");
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
        changed: [],
        fields: { vaccination_id: rabies, patient_id: patient, patient_name: "Cachupín", vaccine: "Nobivac Rabies", due_date: day(3), reminder_status: "pending", tutor_id: tutor, tutor_name: "Vacuna Tutor", tutor_phone: "+56933333333" },
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

describe("a secret this instance cannot open", () => {
  beforeEach(disableAll);

  test("the dispatcher records the error on the delivery, releases its claim at once and leaves it to an instance that can open it", async () => {
    const misKeyed = await createTestApp({ database: t.database, clock: t.clock, config: { secretsKey: "another-secrets-key-that-is-32-bytes-long", webhooks: { dispatch: false, retryScheduleMs: [0, 1000, 5000], allowedNetworks: ["127.0.0.1/32"], allowHttp: true, timeoutMs: 2000, dueDays: 7, dueHour: 8 } } });
    try {
      const hook = await addWebhook(["tutor.created"]);
      await newTutor();
      expect(await misKeyed.context.webhooks.dispatcher.runOnce()).toBe(1);
      expect(receiver.received).toEqual([]);
      const [delivery] = await deliveries(hook.id);
      expect(delivery).toMatchObject({ state: "pending", attempts: 0, error: expect.stringContaining("cannot open the webhook's signing secret") });
      const [claim] = await t.database.query<{ claimed_until: Date | null }>("select claimed_until from webhook_deliveries where id = $1", [delivery!.id]);
      expect(claim!.claimed_until).toBeNull();
      const detail = await owner.as<{ attempt_log: { status_code: number | null; error: string }[] }>("GET", `/api/v1/webhooks/deliveries/${delivery!.id}/attempts`);
      expect(detail.body.attempt_log).toMatchObject([{ status_code: null, error: expect.stringContaining("cannot open") }]);
      // It leaves the endpoint to the others for a while instead of claiming it again…
      expect(await misKeyed.context.webhooks.dispatcher.runOnce()).toBe(0);
      // …and an instance with the right key sends it now, as its first attempt; the webhook stays enabled.
      expect(await dispatcher().runOnce()).toBe(1);
      expect((await deliveries(hook.id))[0]).toMatchObject({ state: "succeeded", attempts: 1, status_code: 200 });
      expect(await webhook(hook.id)).toMatchObject({ enabled: true });
    } finally {
      await misKeyed.close();
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
