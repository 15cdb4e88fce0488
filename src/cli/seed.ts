import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { alerts, clinicalNotes, clinics, folioCounters, invoiceItems, invoices, noteAddenda, patients, payments, prescriptions, refunds, taxDocuments, tutors, users, vaccinations, visits, vitals } from "../db/schema";
import { addDays, dayInZone, startOfDayInZone } from "../lib/time";
import { DAY, HOUR, MINUTE, type Clock } from "../lib/clock";
import { newId, randomAlphanumeric } from "../lib/crypto";
import { createKey } from "../modules/mcp-keys/service";
import { register } from "../modules/auth/service";
import { hashPassword, revokeAllSessions } from "../modules/users/service";
import { createReport } from "../modules/mcp-reports/service";
import { reportTemplates } from "../modules/mcp-reports/templates";
import { taxFor } from "../lib/money";
import { formatRut } from "../lib/rut";
import { createPublicKey } from "node:crypto";
import type { ServiceContext } from "../db/client";
import { createSecretBox } from "../lib/secrets";
import * as siiService from "../modules/billing/sii/service";
import type { SiiSettings } from "../modules/billing/sii/settings";
import { createTestAuthority } from "../modules/billing/sii/test-authority";

const FIRST = ["Camila", "Matías", "Valentina", "Benjamín", "Catalina", "Vicente", "Javiera", "Martín", "Fernanda", "Tomás", "Isidora", "Agustín", "Constanza", "Joaquín", "Francisca", "Cristóbal", "Antonia", "Diego", "Josefa", "Felipe"];
const LAST = ["González", "Muñoz", "Rojas", "Díaz", "Pérez", "Soto", "Contreras", "Silva", "Martínez", "Sepúlveda", "Morales", "Rodríguez", "López", "Fuentes", "Hernández", "Torres", "Araya", "Flores", "Espinoza", "Valenzuela"];
const STREETS = ["Av. Providencia", "Los Leones", "Irarrázaval", "Av. Grecia", "Pedro de Valdivia", "Manuel Montt", "Av. Matta", "Gran Avenida"];
const PETS: { species: string; breeds: string[]; names: string[]; grams: [number, number] }[] = [
  { species: "dog", breeds: ["Quiltro", "Labrador Retriever", "Poodle", "Pastor Alemán", "Beagle", "Bulldog Francés", "Golden Retriever"], names: ["Firulais", "Rocky", "Luna", "Max", "Kira", "Toby", "Canela", "Bruno"], grams: [3_000, 38_000] },
  { species: "cat", breeds: ["Doméstico pelo corto", "Siamés", "Persa", "Maine Coon"], names: ["Michi", "Pelusa", "Simba", "Nala", "Garfield", "Mora"], grams: [2_500, 7_000] },
  { species: "rabbit", breeds: ["Belier", "Cabeza de león"], names: ["Copito", "Tambor"], grams: [1_200, 3_000] },
  { species: "bird", breeds: ["Catita australiana", "Cacatúa"], names: ["Piolín", "Paco"], grams: [30, 600] },
];
const SERVICES: [string, number][] = [["Consulta general", 25_000], ["Vacuna antirrábica", 15_000], ["Vacuna óctuple", 18_000], ["Desparasitación", 9_000], ["Hemograma", 22_000], ["Radiografía", 35_000], ["Ecografía abdominal", 45_000], ["Limpieza dental", 60_000], ["Control post operatorio", 12_000]];
const DEMO_TIME_ZONE = "America/Santiago";
/**
 * The demo clinic's opening hours, by day of the week (0 = Sunday, closed): [opens, closes) in
 * whole hours of the clinic's time zone. Visits are booked inside them.
 */
const OPENING_HOURS: Record<number, [number, number] | null> = { 0: null, 1: [9, 19], 2: [9, 19], 3: [9, 19], 4: [9, 19], 5: [9, 19], 6: [10, 14] };

/** What a visit was for, and what its record then says: its diagnosis, its note, what may be prescribed. */
interface VisitCase {
  reason: string;
  diagnosis: string;
  soap: { subjective: string; objective: string; assessment: string; plan: string; diagnoses: string[] };
  drug?: { drug: string; dose: string; route: string; frequency: string; duration_days: number; quantity: string };
}
const HEALTHY = { subjective: "Tutor refiere buen apetito y actividad normal.", objective: "Mucosas rosadas, TLLC < 2 s, auscultación sin hallazgos.", assessment: "Paciente sano.", plan: "Mantener plan de vacunas y desparasitación.", diagnoses: ["control sano"] };
const VISIT_CASES: VisitCase[] = [
  { reason: "Control anual", diagnosis: "Sano", soap: HEALTHY },
  { reason: "Vacunación", diagnosis: "Sano", soap: { subjective: "Viene a su vacuna anual, sin molestias.", objective: "Examen físico normal, temperatura normal.", assessment: "Paciente sano, apto para vacunar.", plan: "Se aplica la vacuna; próxima dosis en un año.", diagnoses: ["control sano"] } },
  { reason: "Vómitos", diagnosis: "Gastroenteritis leve", soap: { subjective: "Vómitos desde hace 2 días, decaído.", objective: "Dolor leve a la palpación abdominal, deshidratación 5 %.", assessment: "Gastroenteritis aguda.", plan: "Dieta blanda, antiemético, control en 5 días.", diagnoses: ["gastroenteritis"] }, drug: { drug: "Maropitant 10 mg/ml", dose: "1 mg/kg", route: "SC", frequency: "cada 24 h", duration_days: 3, quantity: "1 frasco" } },
  { reason: "Cojera", diagnosis: "Esguince leve", soap: { subjective: "Cojea de la extremidad posterior izquierda desde ayer.", objective: "Dolor a la manipulación de la rodilla, sin inestabilidad articular.", assessment: "Esguince leve.", plan: "Reposo, antiinflamatorio por 5 días, control en una semana.", diagnoses: ["esguince leve"] }, drug: { drug: "Meloxicam 1,5 mg/ml suspensión oral", dose: "0,1 mg/kg", route: "oral", frequency: "cada 24 h", duration_days: 5, quantity: "1 frasco 10 ml" } },
  { reason: "Control de peso", diagnosis: "Sobrepeso", soap: { subjective: "Tutor consulta por aumento de peso.", objective: "Condición corporal 7/9, resto del examen normal.", assessment: "Sobrepeso.", plan: "Dieta de control de peso y control mensual.", diagnoses: ["sobrepeso"] } },
  { reason: "Dermatitis", diagnosis: "Dermatitis alérgica", soap: { subjective: "Prurito generalizado hace 3 semanas.", objective: "Eritema en abdomen y axilas, sin parásitos visibles.", assessment: "Dermatitis alérgica probable.", plan: "Antihistamínico, dieta hipoalergénica, control en 3 semanas.", diagnoses: ["dermatitis alérgica"] }, drug: { drug: "Clorfenamina 4 mg", dose: "0,4 mg/kg", route: "oral", frequency: "cada 12 h", duration_days: 14, quantity: "28 comprimidos" } },
  { reason: "Otitis", diagnosis: "Otitis externa", soap: { subjective: "Se rasca la oreja derecha.", objective: "Conducto auditivo eritematoso con secreción ceruminosa.", assessment: "Otitis externa.", plan: "Limpieza y gotas óticas por 10 días.", diagnoses: ["otitis externa"] }, drug: { drug: "Gotas óticas de gentamicina y betametasona", dose: "4 gotas", route: "ótica", frequency: "cada 12 h", duration_days: 10, quantity: "1 frasco 15 ml" } },
  { reason: "Control post operatorio", diagnosis: "Evolución favorable", soap: { subjective: "Control a los 10 días de la cirugía.", objective: "Herida limpia y seca, sin signos de infección.", assessment: "Evolución post operatoria favorable.", plan: "Retiro de puntos; alta.", diagnoses: ["control post operatorio"] }, drug: { drug: "Amoxicilina + ácido clavulánico 250 mg", dose: "12,5 mg/kg", route: "oral", frequency: "cada 12 h", duration_days: 7, quantity: "14 comprimidos" } },
];
const CASE_OF_REASON: ReadonlyMap<string, (typeof VISIT_CASES)[number]> = new Map(VISIT_CASES.map((c) => [c.reason, c]));

/** A wall-clock time of a calendar day in the time zone, as an instant (exact across DST changes). */
function atLocalTime(date: string, hour: number, minute: number, timeZone: string): Date {
  const guess = new Date(startOfDayInZone(date, timeZone).getTime() + hour * HOUR + minute * MINUTE);
  const shown = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(guess).split(":").map(Number) as [number, number];
  return new Date(guess.getTime() + ((hour - shown[0]) * 60 + (minute - shown[1])) * MINUTE);
}

/** A visit time inside the opening hours of a day `dayOffset` days from today (a Sunday moves to Monday). */
function openingTime(r: { int(min: number, max: number): number; pick<T>(items: readonly T[]): T }, now: Date, dayOffset: number): Date {
  let date = addDays(dayInZone(now, DEMO_TIME_ZONE), dayOffset);
  let hours = OPENING_HOURS[new Date(`${date}T12:00:00Z`).getUTCDay()];
  while (!hours) {
    date = addDays(date, 1);
    hours = OPENING_HOURS[new Date(`${date}T12:00:00Z`).getUTCDay()];
  }
  return atLocalTime(date, r.int(hours[0], hours[1] - 1), r.pick([0, 15, 30, 45]), DEMO_TIME_ZONE);
}

/**
 * The demo's SII set-up, under a stand-in SII (environment "test": its documents print SIN VALOR
 * LEGAL): issuer data, a CAF per type whose range starts after the seeded documents' folios, a
 * test certificate, and one signed boleta, so the console shows issuing, PDF and XML at once.
 */
async function demoSiiSetUp(ctx: ServiceContext, clinicId: string, secretsKey: string, folios: Record<number, number>, unbilledInvoiceId: string | undefined) {
  await ctx.db.update(clinics).set({ economic_activity_code: "750000", commune: "Ñuñoa", sii_resolution_number: 0, sii_resolution_date: "2026-01-05" }).where(eq(clinics.id, clinicId));
  const authority = createTestAuthority();
  const settings: SiiSettings = { secrets: createSecretBox(secretsKey), trust: { sii: new Map(), test: [createPublicKey(authority.publicKeyPem)] } };
  const today = dayInZone(ctx.clock.now(), DEMO_TIME_ZONE);
  for (const docType of [33, 39, 61]) {
    const from = (folios[docType] ?? 0) + 1;
    await siiService.uploadCaf(ctx, settings, clinicId, authority.caf({ rut: formatRut(76_086_428), legalName: "SERVICIOS VETERINARIOS LOS AROMOS", docType, from, to: from + 999, authorizedOn: today }));
  }
  const password = randomAlphanumeric(16);
  const now = ctx.clock.now();
  await siiService.putCertificate(ctx, settings, clinicId, { pkcs12: authority.pkcs12({ holderRut: formatRut(12_345_678), name: "Camila Rojas (demo)", password, notBefore: new Date(now.getTime() - DAY), notAfter: new Date(now.getTime() + 365 * DAY) }), password });
  if (unbilledInvoiceId) await siiService.create(ctx, settings, clinicId, { doc_type: 39, invoice_id: unbilledInvoiceId });
}

/** A small deterministic generator, so two demo seeds look alike. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  return { next, int, pick };
}

export const DEMO_DOMAIN = "demo.vetclinic.cl";
const DEMO_CLINIC = "Clínica Veterinaria Los Aromos";

/** The demo's people, with fixed emails so a second run finds the demo clinic instead of adding one. */
const DEMO_PEOPLE = [
  { role: "owner", email: `owner@${DEMO_DOMAIN}`, name: "Dra. Carolina Fuentes" },
  { role: "vet", email: `vet1@${DEMO_DOMAIN}`, name: "Dr. Ignacio Morales" },
  { role: "vet", email: `vet2@${DEMO_DOMAIN}`, name: "Dra. Paula Sepúlveda" },
  { role: "staff", email: `recepcion@${DEMO_DOMAIN}`, name: "Andrea Torres" },
] as const;

export interface DemoLogin {
  role: string;
  name: string;
  email: string;
  password: string;
}

export interface DemoResult {
  clinic_id: string;
  /** created: there was none; reused: the existing demo clinic, with new passwords and a new key; replaced: deleted and created anew. */
  action: "created" | "reused" | "replaced";
  owner: { email: string; password: string };
  logins: DemoLogin[];
  mcp_key: string;
  counts: Record<string, number>;
}

const demoPassword = () => `demo-${randomAlphanumeric(12)}`;

/** The demo clinic of an earlier run, found by its owner's fixed email. */
async function findDemoClinic(database: Database): Promise<string | undefined> {
  const [row] = await database.query<{ clinic_id: string }>("select clinic_id from users where email = $1 and deleted_at is null", [DEMO_PEOPLE[0].email]);
  return row?.clinic_id;
}

/**
 * Deletes every row of one clinic, whatever tables the schema has: each table with a clinic_id,
 * in as many passes as the foreign keys need (a refused delete is retried after its dependants
 * are gone), plus the quota counters, which hang off the clinic's keys.
 */
export async function deleteClinicData(database: Database, clinicId: string): Promise<void> {
  const tables = (await database.query<{ table_name: string }>(
    "select table_name from information_schema.columns where table_schema = 'public' and column_name = 'clinic_id' and table_name in (select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE')",
  )).map((row) => row.table_name);
  await database.db.transaction(async (tx) => {
    // The clinical record refuses every delete (a trigger), except while its whole clinic is erased.
    await tx.execute(sql`select set_config('app.erasing_clinic', ${clinicId}, true)`);
    await tx.execute(sql`delete from quota_counters where api_key_id in (select id from api_keys where clinic_id = ${clinicId})`);
    let pending = [...tables];
    for (let pass = 0; pending.length && pass < tables.length + 1; pass++) {
      const failed: string[] = [];
      for (const table of pending) {
        try {
          await tx.transaction((savepoint) => savepoint.execute(sql`delete from ${sql.identifier(table)} where clinic_id = ${clinicId}`));
        } catch {
          failed.push(table);
        }
      }
      pending = failed;
    }
    if (pending.length) throw new Error(`could not delete the demo clinic's rows in ${pending.join(", ")}`);
    await tx.execute(sql`delete from clinics where id = ${clinicId}`);
  });
}

async function demoCounts(database: Database, clinicId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ["tutors", "patients", "visits", "invoices", "payments", "refunds", "tax_documents"]) {
    const [row] = await database.query<{ n: number }>(`select count(*)::int as n from ${table} where clinic_id = $1`, [clinicId]);
    counts[table] = row?.n ?? 0;
  }
  return counts;
}

/** A second run without --replace: the same clinic, a new password for every demo login (their sessions end) and a new MCP key. */
async function reuseDemo(database: Database, clock: Clock, clinicId: string): Promise<DemoResult> {
  const now = clock.now();
  const logins: DemoLogin[] = [];
  let ownerId: string | null = null;
  for (const person of DEMO_PEOPLE) {
    const password = demoPassword();
    const [user] = await database.db.update(users).set({ password_hash: await hashPassword(password), updated_at: now }).where(and(eq(users.email, person.email), isNull(users.deleted_at))).returning({ id: users.id });
    if (!user) continue;
    ownerId ??= user.id;
    await revokeAllSessions({ db: database.db, clock }, user.id);
    logins.push({ role: person.role, name: person.name, email: person.email, password });
  }
  const key = await createKey({ db: database.db, clock }, clinicId, ownerId, { name: `Asistente de demostración ${now.toISOString().slice(0, 16)}`, scopes: ["read", "query", "clinic_context"], rate_limit_per_day: 1000 });
  return { clinic_id: clinicId, action: "reused", owner: { email: logins[0]!.email, password: logins[0]!.password }, logins, mcp_key: key.api_key, counts: await demoCounts(database, clinicId) };
}

export interface SeedOptions {
  /** Delete an existing demo clinic and create it anew (default: reuse it). */
  replace?: boolean;
  largeVisitCount?: number;
  /** The server's SECRETS_KEY: with it the demo clinic gets a test CAF per type and a test certificate, and signs a boleta. */
  secretsKey?: string;
}

/** A realistic Chilean clinic: people, pets, two months of visits, billing with SII documents, alerts. Re-runnable: see SeedOptions. */
export async function seedDemo(database: Database, clock: Clock, size: "small" | "large", options: SeedOptions = {}): Promise<DemoResult> {
  const existing = await findDemoClinic(database);
  if (existing && !options.replace) return reuseDemo(database, clock, existing);
  if (existing) await deleteClinicData(database, existing);
  const largeVisitCount = options.largeVisitCount ?? 1_000_000;
  const db = database.db;
  const r = prng(20261122);
  const now = clock.now();
  const logins: DemoLogin[] = DEMO_PEOPLE.map((person) => ({ role: person.role, name: person.name, email: person.email, password: demoPassword() }));
  const { email, password } = logins[0]!;
  const session = await register({ db, clock }, { email, password, name: DEMO_PEOPLE[0].name, clinic_name: DEMO_CLINIC, timezone: DEMO_TIME_ZONE, currency: "CLP" });
  const clinicId = session.clinic.id;
  // A plausible issuer for the SII documents (RUT with a valid check digit).
  await db.update(clinics).set({ legal_name: "Servicios Veterinarios Los Aromos SpA", rut: formatRut(76_086_428), address: "Av. Los Aromos 1234", commune: "Ñuñoa", giro: "Servicios veterinarios" }).where(eq(clinics.id, clinicId));
  const stamp = (at: Date = now) => ({ clinic_id: clinicId, created_at: at, updated_at: at });
  const vetIds = [newId(), newId()];
  const staffIds = [vetIds[0]!, vetIds[1]!, newId()];
  await db.insert(users).values(
    await Promise.all(
      logins.slice(1).map(async (login, i) => ({ ...stamp(), id: staffIds[i]!, email: login.email, name: login.name, role: login.role as "vet" | "staff", password_hash: await hashPassword(login.password) })),
    ),
  );

  const tutorRows = Array.from({ length: 60 }, (_, i) => {
    const name = `${r.pick(FIRST)} ${r.pick(LAST)} ${r.pick(LAST)}`;
    const created = new Date(now.getTime() - r.int(0, 400) * DAY - r.int(0, 10) * HOUR);
    return {
      ...stamp(i < 3 ? new Date(now.getTime() - r.int(0, 5) * HOUR) : created),
      id: newId(),
      name,
      email: `${name.split(" ")[0]!.toLowerCase()}.${i}@correo.cl`.normalize("NFD").replace(/[\u0300-\u036f]/g, ""),
      phone: `+569${r.int(10_000_000, 99_999_999)}`,
      national_id: formatRut(r.int(8_000_000, 24_000_000)),
      address: `${r.pick(STREETS)} ${r.int(100, 4_999)}, Santiago`,
      notes: null,
    };
  });
  await db.insert(tutors).values(tutorRows);

  const patientRows = tutorRows.flatMap((tutor) =>
    Array.from({ length: r.int(1, 2) }, () => {
      const kind = r.pick(PETS);
      return {
        ...stamp(tutor.created_at),
        id: newId(),
        tutor_id: tutor.id,
        name: r.pick(kind.names),
        species: kind.species,
        breed: r.pick(kind.breeds),
        sex: r.pick(["male", "female"]),
        birth_date: new Date(now.getTime() - r.int(120, 4_000) * DAY).toISOString().slice(0, 10),
        weight_grams: r.int(kind.grams[0], kind.grams[1]),
        microchip: r.next() < 0.6 ? String(r.int(100_000_000, 999_999_999)) + String(r.int(100_000, 999_999)) : null,
      };
    }),
  );
  await db.insert(patients).values(patientRows);

  // Two months back and a week ahead; past visits are closed, today's are under way.
  const visitRows = Array.from({ length: 420 }, () => {
    const patient = r.pick(patientRows);
    const dayOffset = r.int(-60, 7);
    const scheduled = openingTime(r, now, dayOffset);
    const visitCase = r.pick(VISIT_CASES);
    const past = scheduled.getTime() < now.getTime() - HOUR;
    const status = !past ? "scheduled" : r.next() < 0.86 ? "completed" : r.next() < 0.5 ? "cancelled" : "no_show";
    return {
      ...stamp(new Date(Math.min(scheduled.getTime() - DAY, now.getTime()))),
      id: newId(),
      patient_id: patient.id,
      vet_id: r.pick(vetIds),
      status: status as "scheduled" | "completed" | "cancelled" | "no_show",
      scheduled_at: scheduled,
      started_at: status === "completed" ? scheduled : null,
      completed_at: status === "completed" ? new Date(scheduled.getTime() + 30 * MINUTE) : null,
      reason: visitCase.reason,
      diagnosis: status === "completed" ? visitCase.diagnosis : null,
      notes: null,
    };
  });
  // A vet sees one patient at a time: a live visit at the very minute of another of its vet's goes
  // to a vet free then, and each visit ends after 30 minutes or when its vet's next one starts.
  // Cancelled and no-show visits hold no time.
  const holding = visitRows.filter((visit) => visit.status !== "cancelled" && visit.status !== "no_show");
  const taken = new Set<string>();
  const opensAt = (instant: Date) => {
    const local = new Intl.DateTimeFormat("en-GB", { timeZone: DEMO_TIME_ZONE, weekday: "short", hour: "2-digit", hourCycle: "h23" }).formatToParts(instant);
    const hours = OPENING_HOURS[["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(local.find((p) => p.type === "weekday")!.value)];
    const hour = Number(local.find((p) => p.type === "hour")!.value);
    return !!hours && hour >= hours[0] && hour < hours[1];
  };
  for (const visit of holding) {
    // The same minute, else the nearest quarter hour still inside the opening hours.
    for (const shift of [0, 15, -15, 30, -30, 45, -45, 60, -60, 75, -75, 90, -90]) {
      const at = visit.scheduled_at.getTime() + shift * MINUTE;
      const free = [visit.vet_id, ...vetIds].find((vet) => !taken.has(`${vet}|${at}`));
      if (!free || !opensAt(new Date(at))) continue;
      visit.vet_id = free;
      visit.scheduled_at = new Date(at);
      if (visit.started_at) visit.started_at = visit.scheduled_at;
      if (visit.completed_at) visit.completed_at = new Date(at + 30 * MINUTE);
      taken.add(`${free}|${at}`);
      break;
    }
  }
  const endsAt = new Map<string, Date>();
  const byVetAndTime = [...holding].sort((a, b) => a.vet_id.localeCompare(b.vet_id) || a.scheduled_at.getTime() - b.scheduled_at.getTime());
  byVetAndTime.forEach((visit, i) => {
    const next = byVetAndTime[i + 1];
    const end = visit.scheduled_at.getTime() + 30 * MINUTE;
    endsAt.set(visit.id, new Date(next && next.vet_id === visit.vet_id ? Math.min(end, next.scheduled_at.getTime()) : end));
  });
  for (const visit of visitRows) Object.assign(visit, { ends_at: endsAt.get(visit.id) ?? new Date(visit.scheduled_at.getTime() + 30 * MINUTE) });
  await db.insert(visits).values(visitRows);

  const tutorOf = new Map(patientRows.map((p) => [p.id, p.tutor_id]));
  const itemRows: (typeof invoiceItems.$inferInsert)[] = [];
  const invoiceRows: (typeof invoices.$inferInsert)[] = [];
  const paymentRows: (typeof payments.$inferInsert)[] = [];
  const refundRows: (typeof refunds.$inferInsert)[] = [];
  const documentRows: (typeof taxDocuments.$inferInsert)[] = [];
  const folios = { 33: 0, 39: 0, 61: 0 };
  for (const visit of visitRows.filter((v) => v.status === "completed")) {
    const emitted = visit.completed_at!;
    const invoiceId = newId();
    const lines = Array.from({ length: r.int(1, 3) }, (_, position) => {
      const [description, unitPrice] = r.pick(SERVICES);
      const quantity = r.int(1, 2);
      return { ...stamp(emitted), id: newId(), invoice_id: invoiceId, position, description, quantity, unit_price: unitPrice, total_amount: quantity * unitPrice };
    });
    const net = lines.reduce((sum, line) => sum + line.total_amount, 0);
    const tax = taxFor(net, 1900);
    const total = net + tax;
    const settled = r.next() < 0.9;
    let paid = 0;
    if (settled) {
      const paymentId = newId();
      const refunded = r.next() < 0.04 ? Math.floor(total / 2) : 0;
      paymentRows.push({ ...stamp(emitted), id: paymentId, invoice_id: invoiceId, amount: total, currency: "CLP", method: r.pick(["cash", "card", "card", "transfer"]), paid_at: emitted, refunded_amount: refunded });
      if (refunded) refundRows.push({ ...stamp(emitted), id: newId(), payment_id: paymentId, invoice_id: invoiceId, amount: refunded, currency: "CLP", reason: "Cobro duplicado de examen", refunded_at: new Date(emitted.getTime() + HOUR) });
      paid = total - refunded;
    }
    invoiceRows.push({
      ...stamp(emitted), id: invoiceId, tutor_id: tutorOf.get(visit.patient_id)!, visit_id: visit.id, status: paid === total ? "paid" : "emitted", currency: "CLP",
      net_amount: net, tax_amount: tax, total_amount: total, paid_amount: paid, emitted_at: emitted, paid_at: paid === total ? emitted : null,
    });
    itemRows.push(...lines);
    if (paid === total) {
      const docType = r.next() < 0.15 ? 33 : 39;
      const folio = ++folios[docType];
      documentRows.push({
        ...stamp(emitted), id: newId(), invoice_id: invoiceId, doc_type: docType, folio, currency: "CLP", net_amount: net, tax_amount: tax, total_amount: total, issued_at: emitted,
        receiver_rut: docType === 33 ? formatRut(r.int(76_000_000, 77_999_999)) : null, receiver_name: docType === 33 ? `${r.pick(LAST)} SpA` : null,
      });
    }
  }
  const credited = documentRows.find((d) => d.doc_type === 39);
  if (credited) {
    // As the service requires: the sale's payment is refunded in full, then the nota de crédito
    // credits the boleta and the invoice becomes `credited`.
    const invoice = invoiceRows.find((row) => row.id === credited.invoice_id)!;
    const payment = paymentRows.find((row) => row.invoice_id === credited.invoice_id)!;
    const refundedAt = new Date(now.getTime() - HOUR);
    payment.refunded_amount = payment.amount;
    refundRows.push({ ...stamp(refundedAt), id: newId(), payment_id: payment.id!, invoice_id: invoice.id!, amount: payment.amount, currency: "CLP", reason: "Venta anulada con nota de crédito", refunded_at: refundedAt });
    Object.assign(invoice, { status: "credited", paid_amount: 0, credited_amount: invoice.total_amount, paid_at: null });
    documentRows.push({ ...stamp(), id: newId(), invoice_id: credited.invoice_id, doc_type: 61, folio: ++folios[61], referenced_document_id: credited.id!, reference_code: 1, currency: "CLP", net_amount: credited.net_amount, tax_amount: credited.tax_amount, total_amount: credited.total_amount, issued_at: now });
  }
  for (let i = 0; i < invoiceRows.length; i += 200) await db.insert(invoices).values(invoiceRows.slice(i, i + 200));
  for (let i = 0; i < itemRows.length; i += 300) await db.insert(invoiceItems).values(itemRows.slice(i, i + 300));
  if (paymentRows.length) await db.insert(payments).values(paymentRows);
  if (refundRows.length) await db.insert(refunds).values(refundRows);
  if (documentRows.length) await db.insert(taxDocuments).values(documentRows);
  await db.insert(folioCounters).values(Object.entries(folios).filter(([, last]) => last > 0).map(([docType, last]) => ({ clinic_id: clinicId, doc_type: Number(docType), last_folio: last })));
  if (options.secretsKey) await demoSiiSetUp({ db, clock }, clinicId, options.secretsKey, folios, invoiceRows.find((row) => row.status === "emitted")?.id);

  await db.insert(alerts).values(
    patientRows.slice(0, 25).map((patient, i) => ({
      ...stamp(), id: newId(), patient_id: patient.id,
      kind: (["follow_up", "follow_up", "allergy", "custom"] as const)[i % 4]!,
      message: ["Control en 15 días", "Retirar puntos", "Alergia a la penicilina", "Tutor prefiere contacto por WhatsApp"][i % 4]!,
      status: i % 5 === 4 ? "resolved" : "active",
      due_date: i % 4 < 2 ? new Date(now.getTime() + r.int(1, 30) * DAY).toISOString().slice(0, 10) : null,
    })),
  );
  await seedClinicalRecord(database, clinicId, now, patientRows, visitRows, vetIds);

  const key = await createKey({ db, clock }, clinicId, session.user.id, { name: "Asistente de demostración", scopes: ["read", "query", "clinic_context"], rate_limit_per_day: 1000 });

  // The starter reports, saved as an owner would (through the guard), so an assistant has them at once.
  const reportContext = { db, clock, database, queryLimits: { timeoutMs: 5_000, maxRows: 1_000 } };
  for (const template of reportTemplates(DEMO_TIME_ZONE)) await createReport(reportContext, clinicId, session.user.id, template);

  let largeVisits = 0;
  if (size === "large") largeVisits = await seedManyVisits(database, clinicId, patientRows.map((p) => p.id), vetIds, now, largeVisitCount);
  return {
    clinic_id: clinicId,
    action: existing ? "replaced" : "created",
    owner: { email, password },
    logins,
    mcp_key: key.api_key,
    counts: { tutors: tutorRows.length, patients: patientRows.length, visits: visitRows.length + largeVisits, invoices: invoiceRows.length, payments: paymentRows.length, refunds: refundRows.length, tax_documents: documentRows.length },
  };
}

const RABIES = { vaccine: "Nobivac Rabies", diseases: ["rabies"] };
const MULTIVALENT: Record<string, { vaccine: string; diseases: string[] }> = {
  dog: { vaccine: "Vanguard Plus 5 (óctuple)", diseases: ["distemper", "hepatitis", "parvovirus", "parainfluenza", "leptospirosis"] },
  cat: { vaccine: "Felocell 4 (triple felina)", diseases: ["panleukopenia", "rhinotracheitis", "calicivirus", "chlamydia"] },
};

/**
 * The demo's clinical record: a signed note for most completed visits (recent ones still in
 * draft), vitals at each visit (the patient's weight is its latest), yearly rabies and the
 * multivalent vaccine for dogs and cats (some overdue, some due this month), prescriptions.
 */
async function seedClinicalRecord(database: Database, clinicId: string, now: Date, patientRows: { id: string; species: string; weight_grams: number; created_at: Date }[], visitRows: { id: string; patient_id: string; vet_id: string; status: string; completed_at: Date | null; reason: string | null }[], vetIds: string[]) {
  const db = database.db;
  const r = prng(20261126);
  const tz = DEMO_TIME_ZONE;
  const stamp = (at: Date) => ({ id: newId(), clinic_id: clinicId, created_at: at, updated_at: at });
  const vitalsRows: (typeof vitals.$inferInsert)[] = [];
  const noteRows: (typeof clinicalNotes.$inferInsert)[] = [];
  const addendumRows: (typeof noteAddenda.$inferInsert)[] = [];
  const prescriptionRows: (typeof prescriptions.$inferInsert)[] = [];
  const vaccinationRows: (typeof vaccinations.$inferInsert)[] = [];
  const baseWeight = new Map(patientRows.map((p) => [p.id, p.weight_grams]));
  for (const patient of patientRows) vitalsRows.push({ ...stamp(patient.created_at), patient_id: patient.id, measured_at: patient.created_at, weight_grams: patient.weight_grams });
  for (const visit of visitRows.filter((v) => v.status === "completed").sort((a, b) => a.completed_at!.getTime() - b.completed_at!.getTime())) {
    const at = visit.completed_at!;
    const grams = Math.max(20, Math.round(baseWeight.get(visit.patient_id)! * (0.97 + r.next() * 0.06)));
    baseWeight.set(visit.patient_id, grams);
    vitalsRows.push({ ...stamp(at), patient_id: visit.patient_id, visit_id: visit.id, recorded_by: visit.vet_id, measured_at: at, weight_grams: grams, temperature_dc: r.int(375, 392), heart_rate_bpm: r.int(70, 160), respiratory_rate_bpm: r.int(16, 36), body_condition_score: r.int(4, 6) });
    // The last two days' notes are still drafts: the board shows those visits as not yet signed.
    const signed = at.getTime() < now.getTime() - 2 * DAY || r.next() < 0.3;
    const visitCase = CASE_OF_REASON.get(visit.reason ?? "") ?? VISIT_CASES[0]!;
    const note = { ...stamp(at), visit_id: visit.id, patient_id: visit.patient_id, author_id: visit.vet_id, ...visitCase.soap, signed_at: signed ? new Date(at.getTime() + 20 * MINUTE) : null, signed_by: signed ? visit.vet_id : null };
    noteRows.push(note);
    if (signed && r.next() < 0.05) addendumRows.push({ ...stamp(new Date(at.getTime() + DAY)), note_id: note.id, patient_id: visit.patient_id, author_id: visit.vet_id, text: "Resultados de laboratorio dentro de rangos normales." });
    if (visitCase.drug && r.next() < 0.6) prescriptionRows.push({ ...stamp(at), patient_id: visit.patient_id, visit_id: visit.id, prescribed_by: visit.vet_id, ...visitCase.drug, instructions: visitCase.drug.route === "oral" ? "Administrar con comida." : null });
  }
  const dose = (patientId: string, product: { vaccine: string; diseases: string[] }, givenAt: Date, closedBy: { id: string; at: Date } | null) => {
    const givenOn = dayInZone(givenAt, tz);
    const row = {
      ...stamp(givenAt), patient_id: patientId, ...product, lot: `L${r.int(10_000, 99_999)}`, lot_expires_on: addDays(givenOn, r.int(60, 500)),
      given_at: givenAt, given_by: r.pick(vetIds), next_due_on: addDays(givenOn, 365),
      due_closed_at: closedBy?.at ?? null, due_closed_by: closedBy?.id ?? null,
    };
    vaccinationRows.push(row);
    return row;
  };
  for (const patient of patientRows) {
    const products = patient.species === "dog" ? [RABIES, MULTIVALENT.dog!] : patient.species === "cat" ? [RABIES, MULTIVALENT.cat!] : [];
    for (const product of products) {
      // The latest dose 1 to 13 months ago: due again from a month ago (overdue) to eleven months ahead.
      const latestAt = new Date(now.getTime() - r.int(20, 400) * DAY - r.int(0, 8) * HOUR);
      const latest = dose(patient.id, product, latestAt, null);
      if (r.next() < 0.7) dose(patient.id, product, new Date(latestAt.getTime() - 365 * DAY), { id: latest.id, at: latestAt });
      const overdue = latest.next_due_on < dayInZone(now, tz);
      if (overdue && r.next() < 0.4) Object.assign(latest, { reminder_status: r.pick(["contacted", "declined"] as const), reminder_updated_at: new Date(now.getTime() - r.int(1, 5) * DAY) });
    }
  }
  for (let i = 0; i < vitalsRows.length; i += 300) await db.insert(vitals).values(vitalsRows.slice(i, i + 300));
  for (let i = 0; i < noteRows.length; i += 200) await db.insert(clinicalNotes).values(noteRows.slice(i, i + 200));
  if (addendumRows.length) await db.insert(noteAddenda).values(addendumRows);
  if (prescriptionRows.length) await db.insert(prescriptions).values(prescriptionRows);
  for (let i = 0; i < vaccinationRows.length; i += 200) await db.insert(vaccinations).values(vaccinationRows.slice(i, i + 200));
  // The one weight rule: each patient's weight is its latest measured one.
  await database.query(
    "update patients p set weight_grams = v.weight_grams from (select distinct on (patient_id) patient_id, weight_grams from vitals where clinic_id = $1 and weight_grams is not null order by patient_id, measured_at desc, id desc) v where p.id = v.patient_id and p.clinic_id = $1",
    [clinicId],
  );
}

/** About a million visits, generated inside the database in a few statements; each vet's visits follow one another minute by minute without overlapping. */
async function seedManyVisits(database: Database, clinicId: string, patientIds: string[], vetIds: string[], now: Date, total: number): Promise<number> {
  const chunk = Math.min(total, 100_000);
  // Older than the two months of ordinary visits, so the same vets are never booked twice.
  const historyEnd = new Date(now.getTime() - 62 * DAY);
  for (let start = 0; start < total; start += chunk) {
    await database.db.execute(sql`
      insert into visits (id, clinic_id, patient_id, vet_id, status, scheduled_at, ends_at, created_at, updated_at, reason)
      select
        (lpad(to_hex((extract(epoch from ts) * 1000)::bigint), 12, '0') || '7' || substr(md5(g::text), 1, 3) || '8' || substr(md5(g::text), 4, 15))::uuid,
        ${clinicId}::uuid,
        (${sql.raw(`array['${patientIds.join("','")}']::uuid[]`)})[1 + g % ${patientIds.length}::int],
        (${sql.raw(`array['${vetIds.join("','")}']::uuid[]`)})[1 + g % ${vetIds.length}::int],
        case when g % 10 = 0 then 'cancelled' when g % 17 = 0 then 'no_show' else 'completed' end,
        ts, ts + make_interval(mins => ${vetIds.length}::int), ts, ts, 'Historial'
      from (select g, ${historyEnd.toISOString()}::timestamptz - make_interval(mins => g) as ts
            from generate_series(${start + 1}::int, ${Math.min(start + chunk, total)}::int) g) s`);
  }
  return total;
}

/** The demo's logins as a block a person can read (printed once by `seed --demo` and `demo`). */
export function demoBlock(result: DemoResult, baseUrl?: string): string {
  // A table with its column names, so nobody has to guess which token is the password.
  const columns = ["role", "email", "password", "name"] as const;
  const widths = columns.map((column) => Math.max(column.length, ...result.logins.map((login) => login[column].length)));
  const row = (cells: readonly string[]) => `  ${cells.map((cell, i) => (i < cells.length - 1 ? cell.padEnd(widths[i]!) : cell)).join("  ")}`;
  const lines = [
    `Demo clinic: ${DEMO_CLINIC} (${result.action})`,
    ...(baseUrl ? [`Open ${baseUrl}/ (the console) or ${baseUrl}/docs (API) — REST at ${baseUrl}/api/v1, MCP at ${baseUrl}/mcp`] : []),
    "",
    row(columns),
    ...result.logins.map((login) => row(columns.map((column) => login[column]))),
    "",
    `  MCP key  ${result.mcp_key}`,
    result.action === "reused" ? "  (Passwords and the key are new on every run; earlier ones no longer work.)" : "",
  ];
  const rule = "=".repeat(Math.max(...lines.map((line) => line.length)));
  return [rule, ...lines.filter((line, i) => line !== "" || i < lines.length - 1), rule].join("\n");
}
