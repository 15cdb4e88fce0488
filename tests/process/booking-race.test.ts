import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database";
import { call, SERVER_STOP_TIMEOUT_MS, startServer, type ServerProcess } from "../helpers/server-process";

/**
 * Three server processes on one PostgreSQL database, as behind a load balancer: 200 concurrent
 * bookings of one slot, tutors online and staff together, spread over the three. Runs when
 * DATABASE_URL is a PostgreSQL URL; an embedded database cannot be shared, so it is skipped there.
 */
let pg: TestDatabase;
let servers: ServerProcess[] = [];
let token: string;

describe.skipIf(!POSTGRES_URL)("three instances sharing PostgreSQL", () => {
  beforeAll(async () => {
    pg = await createTestDatabase();
    // The tutors' requests name their own addresses through the (trusted) local proxy, as a
    // clinic's page reached from many phones would; each instance limits each address.
    const env = { ...pg.serverEnv!, TRUSTED_PROXIES: "127.0.0.1", WEBHOOK_DISPATCHER: "off" };
    servers = await Promise.all([startServer(env), startServer(env), startServer(env)]);
    const owner = await call(servers[0]!.baseUrl, "POST", "/api/v1/auth/register", { json: { email: "race@clinic.test", password: "a long password", name: "R", clinic_name: "Carrera", timezone: "UTC" } });
    expect(owner.status, owner.text).toBe(201);
    token = owner.body.access_token;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await pg?.destroy();
  }, SERVER_STOP_TIMEOUT_MS);

  const staffCall = (i: number, path: string, json: unknown) => call(servers[i % 3]!.baseUrl, "POST", `/api/v1${path}`, { token, json });

  test("200 concurrent bookings of one slot over three instances: exactly one 201, the rest 409 SLOT_TAKEN", async () => {
    const vet = await staffCall(0, "/users", { email: "vet@clinic.test", name: "Vet", role: "vet", password: "a long password" });
    expect(vet.status, vet.text).toBe(201);
    const type = await staffCall(0, "/appointment-types", { name: "Consulta", duration_minutes: 30, vet_ids: [vet.body.id], bookable_online: true });
    expect(type.status, type.text).toBe(201);
    const settings = await call(servers[0]!.baseUrl, "PATCH", "/api/v1/clinic/calendar-settings", { token, json: { slug: "carrera" } });
    expect(settings.status, settings.text).toBe(200);
    const tutor = await staffCall(0, "/tutors", { name: "Mesón" });
    const patient = await staffCall(0, "/patients", { tutor_id: tutor.body.id, name: "Firulais", species: "dog" });
    // 10:00 (UTC, the clinic's zone) on the first weekday at least two days ahead: inside opening hours.
    let day = new Date(Date.now() + 2 * 86_400_000);
    while (day.getUTCDay() === 0 || day.getUTCDay() === 6) day = new Date(day.getTime() + 86_400_000);
    const start = `${day.toISOString().slice(0, 10)}T10:00:00Z`;

    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        if (i % 2 === 1) {
          const r = await staffCall(i, "/visits", { patient_id: patient.body.id, vet_id: vet.body.id, scheduled_at: start.replace(":00:00Z", `:${String(i % 20).padStart(2, "0")}:00Z`) });
          return { status: r.status, body: r.body as { id?: string; code?: string; details?: { conflicting_visit_id: string } } };
        }
        const response = await fetch(`${servers[i % 3]!.baseUrl}/api/v1/public/clinics/carrera/bookings`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID(), "x-forwarded-for": `203.0.113.${i % 250}` },
          body: JSON.stringify({
            appointment_type_id: type.body.id,
            start,
            tutor: { name: `Tutor ${i}`, phone: `+569${10_000_000 + i}`, email: `tutor${i}@example.cl` },
            patient: { name: `Mascota ${i}`, species: "dog" },
            consents: { email_reminders: true, whatsapp_reminders: false },
          }),
        });
        const body = (await response.json()) as { booking?: { id: string }; code?: string; details?: { conflicting_visit_id: string } };
        return { status: response.status, body: { ...body, id: body.booking?.id } };
      }),
    );
    const statuses = answers.map((a) => a.status);
    if (statuses.some((s) => s !== 201 && s !== 409)) console.log(answers.filter((a) => a.status !== 201 && a.status !== 409).slice(0, 2));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(199);
    const winner = answers.find((a) => a.status === 201)!.body.id;
    for (const refusal of answers.filter((a) => a.status === 409)) {
      expect(refusal.body.code).toBe("SLOT_TAKEN");
      expect(refusal.body.details!.conflicting_visit_id).toBe(winner!);
    }
    const [row] = await pg.query<{ n: number }>("select count(*)::int as n from visits where status <> 'cancelled'");
    expect(row!.n).toBe(1);
  }, 180_000);
});
