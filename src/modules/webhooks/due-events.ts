import { sql, type SQL } from "drizzle-orm";
import { rowsOf, type Database } from "../../db/client";
import type { Clock } from "../../lib/clock";
import type { Logger } from "../../lib/logger";
import { DELIVERY_CHANNEL } from "./dispatcher";

/**
 * A kind of record that falls due: its action, its entity, and the rows due in a window of days
 * (as `id, clinic_id, data`), each day at most once.
 */
export interface DueSource {
  action: string;
  entity: string;
  /** Rows due between `today` and `today + days` (both columns of `clinic_days cd`). */
  due(days: number): SQL;
}

/**
 * A vaccination's next dose: open due dates (no later dose closed them, the record and its patient
 * not deleted) unless the tutor declined, with what a reminder sender needs to write and call.
 */
export const VACCINATION_DUE: DueSource = {
  action: "vaccination.due",
  entity: "vaccination",
  due: (days) => sql`
    select v.id, v.clinic_id, jsonb_build_object('vaccination_id', v.id, 'patient_id', v.patient_id, 'patient_name', p.name, 'vaccine', v.vaccine, 'due_date', v.next_due_on, 'reminder_status', v.reminder_status, 'tutor_id', t.id, 'tutor_name', t.name, 'tutor_phone', t.phone) as data
    from vaccinations v
    join clinic_days cd on cd.clinic_id = v.clinic_id
    join patients p on p.id = v.patient_id and p.deleted_at is null
    left join tutors t on t.id = p.tutor_id and t.deleted_at is null
    where v.deleted_at is null and v.due_closed_at is null and v.reminder_status <> 'declined'
      and v.next_due_on between cd.today and cd.today + ${days}::int`,
};

/** Alerts other than vaccine ones (those moved into the clinical record: `vaccination.due`). */
export const ALERT_DUE: DueSource = {
  action: "alert.due",
  entity: "alert",
  due: (days) => sql`
    select a.id, a.clinic_id, jsonb_build_object('due_date', a.due_date, 'kind', a.kind, 'message', a.message, 'patient_id', a.patient_id, 'tutor_id', t.id, 'tutor_phone', t.phone) as data
    from alerts a
    join clinic_days cd on cd.clinic_id = a.clinic_id
    left join patients p on p.id = a.patient_id
    left join tutors t on t.id = p.tutor_id
    where a.status = 'active' and a.deleted_at is null and a.kind <> 'vaccine_due' and a.due_date between cd.today and cd.today + ${days}::int`,
};

/** One scheduler at a time writes due events (instances race otherwise on "not yet today"). */
const DUE_EVENTS_LOCK_ID = 724_311_036;
const CHECK_EVERY_MS = 15 * 60_000;

/**
 * Each morning in the clinic's time zone (from `hour`), one event per record falling due within
 * `days`, queued for the webhooks that subscribe to it. Runs every quarter hour; a clinic's events
 * are written by the first run after its morning hour, once per local day.
 */
export class DueEvents {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly deps: { database: Database; clock: Clock; logger: Logger },
    private readonly settings: { days: number; hour: number },
    private readonly sources: DueSource[] = [VACCINATION_DUE, ALERT_DUE],
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce().catch((error) => this.deps.logger.error("due events failed", { error: error instanceof Error ? error.message : String(error) })), CHECK_EVERY_MS);
    this.timer.unref?.();
    void this.runOnce().catch(() => {});
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Writes what is due now; resolves to how many events were written. */
  async runOnce(): Promise<number> {
    const { database, clock } = this.deps;
    const now = clock.now().toISOString();
    let written = 0;
    await database.changeContexts.run({ actor: { type: "system", id: null, name: "scheduler" }, now: () => clock.now() }, () =>
      database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${DUE_EVENTS_LOCK_ID})`);
        for (const source of this.sources) {
          const rows = await tx.execute(sql`
            with clinic_days as (
              select c.id as clinic_id, (${now}::timestamptz at time zone c.timezone)::date as today, c.timezone
              from clinics c
              where extract(hour from ${now}::timestamptz at time zone c.timezone) >= ${this.settings.hour}
            ), due as (${source.due(this.settings.days)}), fresh as (
              select due.* from due join clinic_days cd on cd.clinic_id = due.clinic_id
              where not exists (
                select 1 from events e where e.clinic_id = due.clinic_id and e.entity_id = due.id and e.action = ${source.action}
                  and e.occurred_at >= (cd.today::timestamp at time zone cd.timezone))
            ), made as (
              insert into events (id, clinic_id, occurred_at, actor_type, actor_name, action, entity_type, entity_id, changes)
              select uuid_v7_at(${now}::timestamptz), clinic_id, ${now}::timestamptz, 'system', 'scheduler', ${source.action}, ${source.entity}, id, data from fresh
              returning id, clinic_id
            ), queued as (
              insert into webhook_deliveries (id, clinic_id, endpoint_id, event_id, state, attempts, next_attempt_at, created_at)
              select uuid_v7_at(${now}::timestamptz), m.clinic_id, w.id, m.id, 'pending', 0, ${now}::timestamptz, ${now}::timestamptz
              from made m join webhook_endpoints w on w.clinic_id = m.clinic_id and w.enabled and w.deleted_at is null
                and (w.events @> array['*'] or w.events @> array[${source.action}])
              returning id
            )
            select (select count(*) from made)::int as events, (select count(*) from queued)::int as queued`);
          const [counts] = rowsOf<{ events: number; queued: number }>(rows);
          written += Number(counts?.events ?? 0);
          if (Number(counts?.queued ?? 0) > 0) await tx.execute(sql`select pg_notify(${DELIVERY_CHANNEL}, '')`);
        }
      }),
    );
    return written;
  }
}
