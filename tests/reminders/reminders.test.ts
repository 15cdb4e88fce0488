import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ReminderSettings } from "../../src/config";
import { createTestApp, type TestApp } from "../helpers/app";
import { registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
import { startSmtpSink, type SmtpSink } from "./smtp-sink";
import { signedNotification, startWhatsAppStandIn, type WhatsAppStandIn } from "./whatsapp-standin";

const WA = { token: "test-whatsapp-token", phoneNumberId: "106540352242922", appSecret: "test-app-secret", verifyToken: "verify-me" };
const PUBLIC_URL = "https://clinica.example";

let t: TestApp;
let owner: ClinicSession;
let sink: SmtpSink;
let standIn: WhatsAppStandIn;

type Message = { id: string; state: string; suppressed_reason: string | null; channel: string; kind: string; subject_id: string; error: string | null; attempts: number; send_at: string };
type Page<T> = { data: T[] };

beforeAll(async () => {
  sink = await startSmtpSink();
  standIn = startWhatsAppStandIn(WA);
  const reminders: ReminderSettings = {
    dispatch: false,
    retryScheduleMs: [1000, 5000],
    timeoutMs: 5000,
    email: { smtpUrl: sink.url, from: "Clínica Test <avisos@clinica.example>" },
    whatsapp: { token: WA.token, phoneNumberId: WA.phoneNumberId, apiUrl: standIn.apiUrl, appSecret: WA.appSecret, verifyToken: WA.verifyToken },
  };
  t = await createTestApp({ config: { reminders, publicUrl: PUBLIC_URL } });
  owner = await registerClinic(t);
  // A receiver of the reminders' event types (deliveries stay queued: this app's webhook dispatcher is off).
  const hook = await owner.as("POST", "/api/v1/webhooks", { json: { url: "http://127.0.0.1:9/hook", events: ["reminder.sent", "reminder.failed", "consent.withdrawn"] } });
  expect(hook.status, hook.text).toBe(201);
});
afterAll(async () => {
  await t.close();
  sink.stop();
  standIn.stop();
});

/** Moves the clock and signs the owner in again (access tokens last minutes). */
async function at(time: string) {
  t.clock.set(time);
  owner = await relogin(t, owner);
}
const dispatcher = () => t.context.reminders.dispatcher;
/** One planning pass and every due message sent. */
async function run() {
  await dispatcher().plan();
  while ((await dispatcher().runOnce()) > 0);
}
const messages = async (query = "") => (await owner.as<Page<Message>>("GET", `/api/v1/reminders${query}`)).body.data;

async function tutorWithPatient(contact: { email?: string; phone?: string }, consents: ("email" | "whatsapp")[]) {
  const tutor = await owner.as<{ id: string }>("POST", "/api/v1/tutors", { json: { name: "Ana Pérez", ...contact } });
  expect(tutor.status, tutor.text).toBe(201);
  for (const channel of consents) {
    expect((await owner.as("POST", `/api/v1/tutors/${tutor.body.id}/consents`, { json: { channel, purpose: "reminders", granted: true } })).status).toBe(201);
  }
  const patient = await owner.as<{ id: string }>("POST", "/api/v1/patients", { json: { tutor_id: tutor.body.id, name: "Firulais", species: "dog" } });
  expect(patient.status, patient.text).toBe(201);
  return { tutorId: tutor.body.id, patientId: patient.body.id };
}
const vaccinate = async (patientId: string, nextDue: string, givenAt?: string) => {
  const dose = await owner.as<{ id: string }>("POST", `/api/v1/patients/${patientId}/vaccinations`, { json: { vaccine: "Nobivac Rabies", diseases: ["rabies"], next_due_on: nextDue, ...(givenAt ? { given_at: givenAt } : {}) } });
  expect(dose.status, dose.text).toBe(201);
  return dose.body.id;
};
const rule = async (body: Record<string, unknown>) => {
  const created = await owner.as<{ id: string }>("POST", "/api/v1/reminder-rules", { json: body });
  expect(created.status, created.text).toBe(201);
  return created.body.id;
};

describe("e-mail reminders through a real SMTP server", () => {
  let vaccinationRule: string;
  beforeAll(async () => {
    vaccinationRule = await rule({ kind: "vaccination_due", name: "Vacunas", offset: "-7d", channels: ["email", "whatsapp"], whatsapp_template: "recordatorio_vacuna", whatsapp_parameters: ["{patient}", "{date}"] });
  });

  test("a due vaccination is mailed once, in Spanish, with RFC 8058 one-click unsubscribe", async () => {
    await at("2026-01-15T12:00:00Z");
    const { patientId } = await tutorWithPatient({ email: "ana@example.test" }, ["email"]);
    await vaccinate(patientId, "2026-01-20");
    await run();
    await run();
    const delivered = sink.messages().filter((m) => m.to === "ana@example.test");
    expect(delivered).toHaveLength(1);
    const mail = delivered[0]!;
    expect(mail.headers.get("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    expect(mail.headers.get("list-unsubscribe")).toMatch(/^<https:\/\/clinica\.example\/api\/v1\/public\/reminders\/unsubscribe\?token=unsubscribe\.[0-9a-f-]{36}\.[A-Za-z0-9_-]+>$/);
    expect(mail.headers.get("content-type")).toContain("multipart/alternative");
    expect(mail.raw).toContain("text/html");
    expect(mail.raw).toContain("Firulais");
    const [sent] = (await messages(`?patient_id=${patientId}`)).filter((m) => m.kind === "vaccination_due");
    expect(sent!.state).toBe("sent");
    expect(mail.headers.get("message-id")).toContain(sent!.id);
    const events = await t.database.query<{ action: string }>("select action from events where entity_type = 'reminder' and entity_id = $1", [sent!.id]);
    expect(events.map((e) => e.action)).toContain("reminder.sent");
  });

  test("a message due in the quiet hours waits for their end (20:00–09:00 in the clinic's zone)", async () => {
    await owner.as("PATCH", "/api/v1/clinic", { json: { timezone: "America/Santiago" } });
    await at("2026-02-01T10:30:00Z"); // 07:30 in Santiago (UTC−3 in summer)
    const { patientId } = await tutorWithPatient({ email: "quiet@example.test" }, ["email"]);
    await vaccinate(patientId, "2026-02-08"); // due day starts 03:00Z; -7d is 2026-02-01 00:00 local: quiet until 09:00 local
    await run();
    const [queued] = await messages(`?patient_id=${patientId}`);
    expect(queued!.state).toBe("queued");
    expect(queued!.send_at).toBe("2026-02-01T12:00:00Z");
    expect(sink.messages().filter((m) => m.to === "quiet@example.test")).toHaveLength(0);
    await at("2026-02-01T12:00:00Z");
    await run();
    expect(sink.messages().filter((m) => m.to === "quiet@example.test")).toHaveLength(1);
    await owner.as("PATCH", "/api/v1/clinic", { json: { timezone: "UTC" } });
  });

  test("the one-click unsubscribe (no login) withdraws consent at once: the next message is suppressed", async () => {
    await at("2026-03-01T12:00:00Z");
    const { tutorId, patientId } = await tutorWithPatient({ email: "bye@example.test" }, ["email"]);
    await vaccinate(patientId, "2026-03-05");
    await run();
    const first = sink.messages().find((m) => m.to === "bye@example.test")!;
    const url = first.headers.get("list-unsubscribe")!.slice(1, -1).replace(PUBLIC_URL, "http://localhost");
    // A second due date queued before the withdrawal.
    await owner.as("POST", `/api/v1/patients/${patientId}/vaccinations`, { json: { vaccine: "Leptospira", diseases: ["leptospirosis"], next_due_on: "2026-03-06" } });
    await dispatcher().plan();
    const clicked = await t.context.reminders && (await t.app.handle(new Request(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" })));
    expect(clicked.status).toBe(200);
    const consents = await owner.as<{ current: { channel: string; purpose: string; granted: boolean }[]; history: { source: string }[] }>("GET", `/api/v1/tutors/${tutorId}/consents`);
    expect(consents.body.current.find((c) => c.channel === "email" && c.purpose === "reminders")!.granted).toBe(false);
    expect(consents.body.history.at(-1)!.source).toBe("link");
    await run();
    expect(sink.messages().filter((m) => m.to === "bye@example.test")).toHaveLength(1);
    const states = (await messages(`?patient_id=${patientId}`)).map((m) => `${m.state}:${m.suppressed_reason}`);
    expect(states).toContain("suppressed:consent_withdrawn");
    const withdrawn = await t.database.query("select 1 from events where action = 'consent.withdrawn' and entity_type = 'consent'");
    expect(withdrawn.length).toBeGreaterThan(0);
  });

  test("the patient's timeline shows each reminder that left or was stopped: state, channel, rule kind and when", async () => {
    await at("2026-03-10T12:00:00Z");
    const { tutorId, patientId } = await tutorWithPatient({ email: "timeline@example.test" }, ["email"]);
    await vaccinate(patientId, "2026-03-15");
    type Entry = { kind: string; id: string; at: string; summary: string; record: Message & { sent_at: string | null } };
    const reminders = async () => (await owner.as<Page<Entry>>("GET", `/api/v1/patients/${patientId}/timeline?kind=reminder`)).body.data;
    await dispatcher().plan();
    expect(await reminders(), "a queued message is not history yet").toEqual([]);
    await run();
    const [sent] = await reminders();
    expect(sent).toMatchObject({ kind: "reminder", summary: "Reminder sent (e-mail): vaccination due", record: { state: "sent", channel: "email", kind: "vaccination_due" } });
    expect(Date.parse(sent!.at)).toBe(Date.parse(sent!.record.sent_at!));
    // A second due date; reception records the tutor's refusal before it leaves.
    t.clock.advance(60_000);
    await owner.as("POST", `/api/v1/patients/${patientId}/vaccinations`, { json: { vaccine: "Leptospira", diseases: ["leptospirosis"], next_due_on: "2026-03-16" } });
    await dispatcher().plan();
    expect((await owner.as("POST", `/api/v1/tutors/${tutorId}/consents`, { json: { channel: "email", purpose: "reminders", granted: false } })).status).toBe(201);
    t.clock.advance(60_000);
    const mark = t.clock.now().toISOString();
    t.clock.advance(1000);
    await run();
    const entries = await reminders();
    // Delta sync of the outbox: the message whose state changed after the mark, the sent one not.
    const changed = await owner.as<Page<Message>>("GET", `/api/v1/reminders?updated_since=${encodeURIComponent(mark)}`);
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data.map((m) => [m.id, m.state])).toEqual([[entries[0]!.id, "suppressed"]]);
    expect(entries.map((e) => [e.record.state, e.record.suppressed_reason])).toEqual([["suppressed", "consent_withdrawn"], ["sent", null]]);
    expect(entries[0]!.summary).toBe("Reminder not sent (e-mail): vaccination due, consent withdrawn");
    // The whole timeline holds them among the clinical entries, newest first.
    const all = (await owner.as<Page<Entry>>("GET", `/api/v1/patients/${patientId}/timeline`)).body.data;
    expect(all.filter((e) => e.kind === "reminder").map((e) => e.id)).toEqual(entries.map((e) => e.id));
    expect(all.map((e) => e.at)).toEqual([...all.map((e) => e.at)].sort().reverse());
  });

  test("an e-mail in doubt (handed to the mail server by an instance killed before the answer was recorded) is sent again at once, with the same Message-ID", async () => {
    await at("2026-03-20T12:00:00Z");
    const { patientId } = await tutorWithPatient({ email: "doubt@example.test" }, ["email"]);
    await vaccinate(patientId, "2026-03-25");
    await dispatcher().plan();
    const [queued] = await messages(`?patient_id=${patientId}`);
    // What a kill during the SMTP conversation leaves: the attempt recorded as handed over, no answer, the claim lapsed.
    await t.database.query("update reminder_messages set sending_at = $2, attempts = 1, claimed_until = $2 where id = $1", [queued!.id, t.clock.now().toISOString()]);
    t.clock.advance(60_000);
    await run();
    const copies = sink.messages().filter((m) => m.to === "doubt@example.test");
    expect(copies).toHaveLength(1);
    expect(copies[0]!.headers.get("message-id")).toContain(queued!.id);
    expect((await messages(`?patient_id=${patientId}`))[0]).toMatchObject({ state: "sent", attempts: 2 });
    // Handing over is bookkeeping: the event log has the message's creation and its sending, nothing between.
    const events = await t.database.query<{ action: string }>("select action from events where entity_type = 'reminder' and entity_id = $1 order by seq", [queued!.id]);
    expect(events.map((e) => e.action)).toEqual(["reminder.created", "reminder.sent"]);
  });

  test("a forged or altered link does nothing", async () => {
    const forged = await t.app.handle(new Request("http://localhost/api/v1/public/reminders/unsubscribe?token=unsubscribe.0190a1b2-0000-7000-8000-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", { method: "POST" }));
    expect(forged.status).toBe(404);
    expect(await forged.text()).toContain("no es válido");
  });

  test("suppressed at send time: dose given, patient deceased, late", async () => {
    await at("2026-04-01T12:00:00Z");
    const given = await tutorWithPatient({ email: "given@example.test" }, ["email"]);
    await vaccinate(given.patientId, "2026-04-05");
    const deceased = await tutorWithPatient({ email: "rip@example.test" }, ["email"]);
    await vaccinate(deceased.patientId, "2026-04-05");
    const late = await tutorWithPatient({ email: "late@example.test" }, ["email"]);
    await vaccinate(late.patientId, "2026-04-01", "2025-04-01T12:00:00Z");
    await dispatcher().plan();
    // The dose is given, the patient dies, and the other's due day ends before anything leaves.
    await owner.as("POST", `/api/v1/patients/${given.patientId}/vaccinations`, { json: { vaccine: "Nobivac Rabies", diseases: ["rabies"] } });
    expect((await owner.as("PATCH", `/api/v1/patients/${deceased.patientId}`, { json: { deceased_on: "2026-04-01" } })).status).toBe(200);
    await at("2026-04-02T00:00:01Z");
    while ((await dispatcher().runOnce()) > 0);
    const reasonOf = async (patientId: string) => (await messages(`?patient_id=${patientId}&kind=vaccination_due`)).map((m) => m.suppressed_reason);
    expect(await reasonOf(given.patientId)).toEqual(["dose_given"]);
    expect(await reasonOf(deceased.patientId)).toEqual(["patient_deceased"]);
    expect(await reasonOf(late.patientId)).toEqual(["late"]);
    for (const to of ["given@example.test", "rip@example.test", "late@example.test"]) expect(sink.messages().filter((m) => m.to === to)).toHaveLength(0);
    expect(vaccinationRule).toBeString();
  });
});

describe("WhatsApp template messages through the stand-in", () => {
  let appointmentRule: string;
  beforeAll(async () => {
    appointmentRule = await rule({ kind: "appointment", name: "Horas", offset: "-24h", channels: ["whatsapp", "email"], whatsapp_template: "recordatorio_hora", whatsapp_language: "es", whatsapp_parameters: ["{tutor}", "{patient}", "{date}", "{time}"] });
  });

  test("a rule that sends on WhatsApp must name its template", async () => {
    const refused = await owner.as("POST", "/api/v1/reminder-rules", { json: { kind: "appointment", name: "x", offset: "-2h", channels: ["whatsapp"] } });
    expect(refused.status).toBe(422);
  });

  test("an appointment reminder goes as the rule's template; statuses and a BAJA reply are recorded", async () => {
    await at("2026-05-04T12:00:00Z");
    const { tutorId, patientId } = await tutorWithPatient({ phone: "+56 9 1234 5678" }, ["whatsapp"]);
    const visit = await owner.as<{ id: string }>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-05-05T13:00:00Z", reason: "Control" } });
    expect(visit.status, visit.text).toBe(201);
    await run();
    expect(standIn.accepted).toHaveLength(0); // due at 13:00 the day before
    await at("2026-05-04T13:00:00Z");
    await run();
    expect(standIn.refused).toEqual([]);
    expect(standIn.accepted).toHaveLength(1);
    const sent = standIn.accepted[0]!;
    expect(sent).toMatchObject({ to: "56912345678", template: "recordatorio_hora", language: "es" });
    expect(sent.parameters.slice(0, 2)).toEqual(["Ana Pérez", "Firulais"]);
    expect(sent.parameters[3]).toBe("13:00");

    const post = (body: string, signature: string) => t.app.handle(new Request("http://localhost/api/v1/integrations/whatsapp/webhook", { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": signature }, body }));
    const delivered = signedNotification(WA.appSecret, { statuses: [{ id: sent.id, status: "delivered", timestamp: "1777986000", recipient_id: sent.to }] });
    expect((await post(delivered.body, delivered.signature)).status).toBe(200);
    const read = signedNotification(WA.appSecret, { statuses: [{ id: sent.id, status: "read", timestamp: "1777986060", recipient_id: sent.to }] });
    expect((await post(read.body, read.signature)).status).toBe(200);
    const [message] = await messages(`?patient_id=${patientId}`);
    expect(message!.state).toBe("read");

    // A forged notification is refused and changes nothing.
    const forged = signedNotification("not-the-secret", { messages: [{ from: sent.to, id: "wamid.x", timestamp: "1777986100", type: "text", text: { body: "BAJA" } }] });
    expect((await post(forged.body, forged.signature)).status).toBe(403);
    const reply = signedNotification(WA.appSecret, { contacts: [{ profile: { name: "Ana" }, wa_id: sent.to }], messages: [{ from: sent.to, id: "wamid.reply1", timestamp: "1777986100", type: "text", text: { body: " bája " } }] });
    expect((await post(reply.body, reply.signature)).status).toBe(200);
    const consents = await owner.as<{ current: { channel: string; purpose: string; granted: boolean }[]; history: { source: string }[] }>("GET", `/api/v1/tutors/${tutorId}/consents`);
    expect(consents.body.current.find((c) => c.channel === "whatsapp" && c.purpose === "reminders")!.granted).toBe(false);
    expect(consents.body.history.at(-1)!.source).toBe("reply");
    expect(appointmentRule).toBeString();
  });

  test("a WhatsApp message in doubt waits for Meta's status webhook, which settles it by its biz_opaque_callback_data; one Meta never took is sent after the settling time", async () => {
    await at("2026-05-10T12:00:00Z");
    const taken = await tutorWithPatient({ phone: "+56 9 4444 1111" }, ["whatsapp"]);
    const lost = await tutorWithPatient({ phone: "+56 9 4444 2222" }, ["whatsapp"]);
    for (const { patientId } of [taken, lost]) expect((await owner.as("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-05-11T11:00:00Z" } })).status).toBe(201);
    await dispatcher().plan();
    const [takenMessage] = await messages(`?patient_id=${taken.patientId}`);
    const [lostMessage] = await messages(`?patient_id=${lost.patientId}`);
    // What a kill leaves: both handed over; Meta accepted the first, the second never reached it.
    const handedAt = t.clock.now();
    await t.database.query("update reminder_messages set sending_at = $2, attempts = 1, claimed_until = $2 where id = any($1::uuid[])", [[takenMessage!.id, lostMessage!.id], handedAt.toISOString()]);
    const before = standIn.accepted.length;
    const accepted = await t.context.reminders.channels.whatsapp!.send({ messageId: takenMessage!.id, to: "+56 9 4444 1111", template: "recordatorio_hora", language: "es", parameters: ["Ana"] });
    expect(accepted.ok).toBe(true);
    expect(standIn.accepted.at(-1)!.callback).toBe(takenMessage!.id);
    // The test app's first retry step (1 s) is how long a message in doubt waits for Meta's status.
    t.clock.advance(500);
    await run();
    expect(standIn.accepted.length, "nothing is sent again while in doubt").toBe(before + 1);
    expect((await messages(`?patient_id=${lost.patientId}`))[0]).toMatchObject({ state: "queued", attempts: 1 });
    // Meta's status names the message by the callback data: it is settled as sent, with Meta's id.
    const status = signedNotification(WA.appSecret, { statuses: [{ id: standIn.accepted.at(-1)!.id, status: "sent", timestamp: "1778414430", recipient_id: "56944441111", biz_opaque_callback_data: takenMessage!.id }] });
    const posted = await t.app.handle(new Request("http://localhost/api/v1/integrations/whatsapp/webhook", { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": status.signature }, body: status.body }));
    expect(posted.status).toBe(200);
    const [settled] = await t.database.query<{ status: string; provider_message_id: string; attempts: number }>("select status, provider_message_id, attempts from reminder_messages where id = $1", [takenMessage!.id]);
    expect(settled).toEqual({ status: "sent", provider_message_id: standIn.accepted.at(-1)!.id, attempts: 1 });
    // No status for the other within the settling time: Meta never took it, and it goes now, once.
    t.clock.advance(1000);
    await run();
    expect(standIn.accepted.length).toBe(before + 2);
    expect(standIn.accepted.at(-1)).toMatchObject({ to: "56944442222", callback: lostMessage!.id });
    expect((await messages(`?patient_id=${lost.patientId}`))[0]).toMatchObject({ state: "sent", attempts: 2 });
    await run();
    expect(standIn.accepted.length).toBe(before + 2);
  });

  test("Meta's verification handshake echoes the challenge only for the verify token", async () => {
    const ok = await t.app.handle(new Request(`http://localhost/api/v1/integrations/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${WA.verifyToken}&hub.challenge=1158201444`));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("1158201444");
    const wrong = await t.app.handle(new Request("http://localhost/api/v1/integrations/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1"));
    expect(wrong.status).toBe(403);
  });

  test("a failure is retried with backoff; a refusal ends as failed with the provider's error", async () => {
    await at("2026-06-01T12:00:00Z");
    const retried = await tutorWithPatient({ phone: "+56 9 2222 3333" }, ["whatsapp"]);
    await owner.as("POST", "/api/v1/visits", { json: { patient_id: retried.patientId, scheduled_at: "2026-06-02T11:30:00Z" } });
    standIn.failNext.push(503);
    await run();
    let [message] = await messages(`?patient_id=${retried.patientId}`);
    expect(message).toMatchObject({ state: "queued", attempts: 1 });
    expect(message!.error).toContain("Service temporarily unavailable");
    t.clock.advance(1000);
    await run();
    [message] = await messages(`?patient_id=${retried.patientId}`);
    expect(message!.state).toBe("sent");

    const refused = await tutorWithPatient({ phone: "+56 9 4444 5555" }, ["whatsapp"]);
    await owner.as("PATCH", `/api/v1/reminder-rules/${appointmentRule}`, { json: { whatsapp_template: "Bad-Template" } }).then((r) => expect(r.status).toBe(422));
    await owner.as("POST", "/api/v1/visits", { json: { patient_id: refused.patientId, scheduled_at: "2026-06-02T11:45:00Z" } });
    standIn.failNext.push(400);
    await run();
    [message] = await messages(`?patient_id=${refused.patientId}`);
    expect(message!.state).toBe("failed");
    expect(message!.error).toContain("100");
    const events = await t.database.query<{ action: string }>("select action from events where entity_type = 'reminder' and entity_id = $1", [message!.id]);
    expect(events.map((e) => e.action)).toContain("reminder.failed");
  });

  test("a moved appointment's reminder is suppressed and the new time gets its own", async () => {
    await at("2026-07-01T12:00:00Z");
    const { patientId } = await tutorWithPatient({ phone: "+56 9 6666 7777" }, ["whatsapp"]);
    const visit = await owner.as<{ id: string }>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-07-02T11:30:00Z" } });
    await dispatcher().plan();
    await owner.as("PATCH", `/api/v1/visits/${visit.body.id}`, { json: { scheduled_at: "2026-07-02T11:50:00Z" } });
    await run();
    const states = (await messages(`?patient_id=${patientId}`)).map((m) => `${m.state}:${m.suppressed_reason}`).sort();
    expect(states).toEqual(["sent:null", "suppressed:appointment_moved"]);
  });
});

describe("appointment links", () => {
  test("confirm sets confirmed_at and cancel cancels within the window, both as the tutor's events", async () => {
    await rule({ kind: "appointment", name: "Horas por correo", offset: "-48h", channels: ["email"] });
    await at("2026-08-01T12:00:00Z");
    const { patientId } = await tutorWithPatient({ email: "links@example.test" }, ["email"]);
    const first = await owner.as<{ id: string; revision: number }>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-08-03T12:30:00Z" } });
    const second = await owner.as<{ id: string; revision: number }>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-08-03T12:40:00Z" } });
    await at("2026-08-01T12:45:00Z");
    await run();
    const mails = sink.messages().filter((m) => m.to === "links@example.test");
    expect(mails).toHaveLength(2);
    const linksIn = (raw: string) => [...raw.replace(/=\r?\n/g, "").replace(/=3D/g, "=").matchAll(/https:\/\/clinica\.example\/api\/v1\/public\/reminders\/(confirm|cancel)\?token=[A-Za-z0-9._-]+/g)].map((m) => m[0]);
    const all = mails.flatMap((m) => linksIn(m.raw));
    const byVisit = async (action: string, visitId: string) => {
      for (const link of all.filter((l) => l.includes(`/${action}?`))) {
        const messageId = link.split("token=")[1]!.split(".")[1]!;
        const [row] = await t.database.query<{ subject_id: string }>("select subject_id from reminder_messages where id = $1", [messageId]);
        if (row?.subject_id === visitId) return link.replace("https://clinica.example", "http://localhost");
      }
      throw new Error(`no ${action} link for ${visitId}`);
    };
    const page = await t.app.handle(new Request(await byVisit("confirm", first.body.id)));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<form method=\"post\"");
    expect((await owner.as<{ confirmed_at: string | null }>("GET", `/api/v1/visits/${first.body.id}`)).body.confirmed_at).toBeNull();
    expect((await t.app.handle(new Request(await byVisit("confirm", first.body.id), { method: "POST" }))).status).toBe(200);
    // Each change bumps the visit's revision (the calendar feed's SEQUENCE).
    expect((await owner.as<{ confirmed_at: string | null; revision: number }>("GET", `/api/v1/visits/${first.body.id}`)).body).toMatchObject({ confirmed_at: "2026-08-01T12:45:00Z", revision: first.body.revision + 1 });
    expect((await t.app.handle(new Request(await byVisit("cancel", second.body.id), { method: "POST" }))).status).toBe(200);
    expect((await owner.as<{ status: string; revision: number }>("GET", `/api/v1/visits/${second.body.id}`)).body).toMatchObject({ status: "cancelled", revision: second.body.revision + 1 });
    const actors = await t.database.query<{ actor_name: string; action: string }>("select actor_name, action from events where entity_type = 'visit' and entity_id in ($1, $2) and actor_name like 'tutor%'", [first.body.id, second.body.id]);
    expect(actors.map((a) => a.action).sort()).toEqual(["visit.status_changed", "visit.updated"]);
    // The window is the calendar setting (the one online bookings obey): 13 hours here.
    expect((await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { cancellation_window_minutes: 13 * 60 } })).status).toBe(200);
    const third = await owner.as<{ id: string }>("POST", "/api/v1/visits", { json: { patient_id: patientId, scheduled_at: "2026-08-03T12:50:00Z" } });
    await at("2026-08-01T12:55:00Z");
    await run();
    const fresh = sink.messages().filter((m) => m.to === "links@example.test").flatMap((m) => linksIn(m.raw));
    all.push(...fresh);
    // 12 h 50 min before the visit: past a 13-hour window, the link says to call the clinic.
    await at("2026-08-03T00:00:00Z");
    const tooLate = await t.app.handle(new Request(await byVisit("cancel", third.body.id), { method: "POST" }));
    expect(tooLate.status).toBe(409);
    expect((await owner.as<{ status: string }>("GET", `/api/v1/visits/${third.body.id}`)).body.status).toBe("scheduled");
    // Within a 12-hour window the same link cancels.
    expect((await owner.as("PATCH", "/api/v1/clinic/calendar-settings", { json: { cancellation_window_minutes: 12 * 60 } })).status).toBe(200);
    expect((await t.app.handle(new Request(await byVisit("cancel", third.body.id), { method: "POST" }))).status).toBe(200);
    expect((await owner.as<{ status: string }>("GET", `/api/v1/visits/${third.body.id}`)).body.status).toBe("cancelled");
  });
});

test("reminder.sent, reminder.failed and consent.withdrawn are webhook event types: each was queued for the clinic's receiver", async () => {
  const queued = await t.database.query<{ action: string }>("select distinct e.action from webhook_deliveries d join events e on e.id = d.event_id order by 1");
  expect(queued.map((row) => row.action)).toEqual(["consent.withdrawn", "reminder.failed", "reminder.sent"]);
});
